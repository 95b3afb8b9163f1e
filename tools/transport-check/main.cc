// smd-transport-check: conformance tests for any smd transport plugin,
// driven through the plugin ABI alone (include/smd_transport.h).
#include <cstdio>
#include <string>
#include <vector>

#include "exports.h"
#include "options.h"
#include "plugin_table.h"
#include "registry.h"
#include "supervisor.h"

using namespace tcheck;

static bool make_plan(const Options &o, Plan *plan, std::string *error) {
  const std::vector<TestCase> &cases = test_cases();
  for (const std::string &name : o.only) {
    bool known = false;
    for (const TestCase &tc : cases) known = known || name == tc.name;
    if (!known) {
      *error = "unknown test '" + name + "' (--list shows them)";
      return false;
    }
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    const TestCase &tc = cases[i];
    bool chosen;
    if (o.bench) chosen = tc.always || tc.bench_only;
    else if (tc.bench_only) chosen = false;
    else if (o.only.empty() || tc.always) chosen = true;
    else {
      chosen = false;
      for (const std::string &name : o.only) chosen = chosen || name == tc.name;
    }
    if (!chosen) continue;
    double limit = o.timeout_s > 0 ? o.timeout_s : tc.timeout_s;
    plan->tests.push_back(int(i));
    plan->limits.push_back(limit);
    plan->total_limit += limit;
  }
  plan->total_limit += 30;
  return true;
}

// A warning, not a failure: the plugin works, but its extra symbols can
// collide with the application's or another library's.
static void warn_about_exports(const std::string &path) {
  std::vector<std::string> extra;
  std::string error;
  if (!extra_exports(path, &extra, &error)) {
    printf("note: exported symbols not checked: %s\n", error.c_str());
    return;
  }
  if (extra.empty()) return;
  std::string list;
  for (size_t i = 0; i < extra.size() && i < 8; ++i) list += (i ? ", " : "") + extra[i];
  if (extra.size() > 8) list += ", ...";
  printf(
      "warning: the plugin exports %zu symbol%s besides its entry (%s): build it with "
      "-fvisibility=hidden so that only " SMD_TRANSPORT_ENTRY_V1 " is visible\n",
      extra.size(), extra.size() == 1 ? "" : "s", list.c_str());
}

int main(int argc, char **argv) {
  Options o;
  bool help = false;
  std::string error;
  if (!parse_options(argc, argv, &o, &help, &error)) {
    fprintf(stderr, "smd-transport-check: %s\n", error.c_str());
    print_usage(stderr);
    return 2;
  }
  if (help) {
    print_usage(stdout);
    return 0;
  }
  if (o.list) {
    for (const TestCase &tc : test_cases())
      printf("%-18s %s%s\n", tc.name, tc.summary, tc.bench_only ? " (with --bench)" : "");
    return 0;
  }
  Plan plan;
  if (!make_plan(o, &plan, &error)) {
    fprintf(stderr, "smd-transport-check: %s\n", error.c_str());
    return 2;
  }
  LoadedPlugin plugin;
  std::vector<std::string> problems;
  if (!load_plugin(o.plugin, &plugin, &problems)) {
    for (const std::string &p : problems) fprintf(stderr, "%s\n", p.c_str());
    return 2;
  }
  warn_about_exports(o.plugin);
  return supervise(plugin, o, plan);
}
