// smd-info plugins: every plugin file libsmd would consider, in search
// order: its name, path, plugin ABI, whether it loads and why not.
#include <cstdio>

#include "commands.h"
#include "tool_support/core_interface.h"
#include "text_out.h"

namespace smdinfo {
namespace {

std::string status_of(const smd::SurveyedPlugin &s) {
  if (!s.plugin) return "does not load: " + s.error;
  return s.shadowed ? "loads, but an earlier " + s.name + " is used" : "loads";
}

}  // namespace

int run_plugins(const Options &o) {
  std::vector<smd::SurveyedPlugin> found = smd::survey_plugins();
  int failed = 0;
  for (const auto &s : found) failed += !s.plugin && !s.shadowed;
  if (o.json) {
    puts("[");
    for (size_t i = 0; i < found.size(); ++i) {
      const smd::SurveyedPlugin &s = found[i];
      printf(
          "  {\"name\": %s, \"path\": %s, \"abi_version\": %u, \"loads\": %s, \"used\": %s, "
          "\"error\": %s}%s\n",
          json_string(s.name).c_str(), json_string(s.path).c_str(),
          s.plugin ? s.plugin->table->abi_version : 0u, s.plugin ? "true" : "false",
          s.shadowed ? "false" : "true", json_string(s.error).c_str(),
          i + 1 < found.size() ? "," : "");
    }
    puts("]");
  } else {
    std::vector<std::vector<std::string>> rows = {{"plugin", "abi", "status", "path"}};
    for (const auto &s : found)
      rows.push_back({s.name, s.plugin ? std::to_string(s.plugin->table->abi_version) : "-",
                      status_of(s), s.path});
    for (const std::string &line : align_columns(rows)) puts(line.c_str());
    if (found.empty()) {
      std::string dirs;
      for (const std::string &d : smd::plugin_search_dirs()) dirs += "\n  " + d;
      printf("no plugin found; searched (SMD_PLUGIN_PATH first):%s\n", dirs.c_str());
    }
  }
  return failed || found.empty() ? 1 : 0;
}

}  // namespace smdinfo
