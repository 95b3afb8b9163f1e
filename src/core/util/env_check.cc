#include "core/util/env_check.h"

#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/util/log.h"
#include "core/util/params.h"

namespace smd {
namespace {

// Variables whose value is one word of a list; those read as integers,
// seconds or booleans are checked by their type.
struct Choices {
  const char *name;
  std::vector<const char *> words;
  const char *fallback;  // what smd does with another value
};
const std::vector<Choices> &choice_params() {
  static const std::vector<Choices> c = {
      {"SMD_DEBUG", {"none", "off", "warn", "info", "trace"}, "logging at warn"},
      {"SMD_WAIT", {"auto", "spin", "yield", "sleep"}, "SMD_ERR_INVALID_ARGUMENT at init"},
      {"SMD_CHECK", {"off", "fast"}, "SMD_ERR_INVALID_ARGUMENT at the first collective"},
  };
  return c;
}

std::string join(const std::vector<const char *> &words) {
  std::string s;
  for (size_t i = 0; i < words.size(); ++i)
    s += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + std::string(words[i]);
  return s;
}

// "" when `value` suits the variable's type.
std::string value_problem(const ParamDef &p, const std::string &value) {
  for (const Choices &c : choice_params()) {
    if (strcmp(c.name, p.name) != 0) continue;
    for (const char *w : c.words)
      if (!strcasecmp(w, value.c_str())) return "";
    return std::string(p.name) + "=" + value + " is not one of " + join(c.words) + " (" +
           c.fallback + ")";
  }
  const char *v = value.c_str();
  char *end = nullptr;
  errno = 0;
  if (!strcmp(p.type, "int")) {
    strtoll(v, &end, 10);
    if (errno || end == v || *end)
      return std::string(p.name) + "=" + value +
             " is not an integer (the calls that read it fail with SMD_ERR_INVALID_ARGUMENT)";
  } else if (!strcmp(p.type, "seconds")) {
    double d = strtod(v, &end);
    if (errno || end == v || *end || !std::isfinite(d) || d < 0)
      return std::string(p.name) + "=" + value +
             " is not a number of seconds like 30 or 0.5 (the calls that read it fail with "
             "SMD_ERR_INVALID_ARGUMENT)";
  } else if (!strcmp(p.type, "bool")) {
    static const std::vector<const char *> words = {"1",    "0",     "yes", "no",
                                                    "true", "false", "on",  "off"};
    bool ok =
        std::any_of(words.begin(), words.end(), [&](const char *w) { return !strcasecmp(w, v); });
    if (!ok)
      return std::string(p.name) + "=" + value + " is not a boolean: use " + join(words) +
             " (the calls that read it fail with SMD_ERR_INVALID_ARGUMENT)";
  }
  return "";
}

}  // namespace

size_t edit_distance(const std::string &a, const std::string &b) {
  // Optimal string alignment: Levenshtein plus adjacent transpositions.
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::string closest_name(const std::string &name, const std::vector<std::string> &known) {
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const std::string &k : known) {
    size_t d = edit_distance(name, k);
    if (d < best_d) best_d = d, best = k;
  }
  // A third of the part after SMD_, at least 1: SMD_TRANSPORTT is close
  // to SMD_TRANSPORT, SMD_FOO to nothing.
  size_t limit = std::max<size_t>(1, (name.size() > 4 ? name.size() - 4 : 0) / 3);
  return best_d <= limit ? best : "";
}

std::vector<std::string> environment_problems(
    const std::vector<std::string> &env,
    const std::function<std::vector<std::string>()> &plugin_params) {
  std::vector<std::string> problems;
  std::vector<std::string> known;
  bool asked_plugins = false;
  std::vector<std::string> declared;
  for (const std::string &entry : env) {
    if (entry.rfind("SMD_", 0) != 0) continue;
    size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    std::string name = entry.substr(0, eq), value = entry.substr(eq + 1);
    if (const ParamDef *p = find_param(name.c_str())) {
      if (!value.empty())
        if (std::string why = value_problem(*p, value); !why.empty()) problems.push_back(why);
      continue;
    }
    if (is_foreign_param(name)) continue;
    if (!asked_plugins) {
      declared = plugin_params ? plugin_params() : std::vector<std::string>{};
      asked_plugins = true;
      for (const ParamDef &p : all_params()) known.push_back(p.name);
      known.insert(known.end(), declared.begin(), declared.end());
    }
    if (std::find(declared.begin(), declared.end(), name) != declared.end()) continue;
    std::string near = closest_name(name, known);
    problems.push_back(name + " is not a variable smd reads" +
                       (near.empty() ? std::string("") : "; did you mean " + near + "?") +
                       " ('smd-info params' lists them all)");
  }
  return problems;
}

void warn_about_environment_once(const std::function<std::vector<std::string>()> &plugin_params) {
  static std::once_flag once;
  std::call_once(once, [&] {
    std::vector<std::string> env;
    for (char **e = environ; e && *e; ++e) env.emplace_back(*e);
    for (const std::string &problem : environment_problems(env, plugin_params))
      SMD_WARN("init", "%s", problem.c_str());
  });
}

}  // namespace smd
