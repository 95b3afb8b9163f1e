// smd-info doctor: runs every check of doctor.h, prints one verdict per
// item (or a JSON array), and exits 1 when any item FAILs.
#include <algorithm>
#include <cstdio>

#include "tool_support/core_interface.h"

#include "commands.h"
#include "doctor.h"
#include "text_out.h"

namespace smdinfo {

int run_doctor(const Options &o) {
  std::vector<std::string> loadable;
  std::vector<CheckResult> results = check_plugins(&loadable);
  // Plugins that reach only threads of one process cannot join two.
  for (const smd::SurveyedPlugin &s : smd::survey_plugins())
    if (s.plugin && !s.shadowed && (s.plugin->table->caps & SMD_TRANSPORT_CAP_SINGLE_PROCESS))
      loadable.erase(std::remove(loadable.begin(), loadable.end(), s.name), loadable.end());
  // shm first (within a node), then every network plugin that loads.
  for (const std::string &t : loadable)
    if (t == "shm") results.push_back(check_transport(t));
  for (const std::string &t : loadable)
    if (t != "shm") results.push_back(check_transport(t));
  results.push_back(check_dev_shm());
  results.push_back(check_cross_memory_attach());
  results.push_back(check_hwloc());
  results.push_back(check_cuda());
  results.push_back(check_store_port());

  int fails = 0, warns = 0;
  for (const CheckResult &r : results) {
    fails += r.verdict == Verdict::kFail;
    warns += r.verdict == Verdict::kWarn;
  }
  if (o.json) {
    puts("[");
    for (size_t i = 0; i < results.size(); ++i) {
      const CheckResult &r = results[i];
      printf("  {\"check\": %s, \"verdict\": %s, \"detail\": %s, \"fix\": %s}%s\n",
             json_string(r.item).c_str(), json_string(verdict_name(r.verdict)).c_str(),
             json_string(r.detail).c_str(), json_string(r.fix).c_str(),
             i + 1 < results.size() ? "," : "");
    }
    puts("]");
  } else {
    for (const CheckResult &r : results) {
      printf("%-4s  %s: %s\n", verdict_name(r.verdict), r.item.c_str(), r.detail.c_str());
      if (!r.fix.empty()) printf("      fix: %s\n", r.fix.c_str());
    }
    printf("%zu checks: %d failed, %d warned\n", results.size(), fails, warns);
  }
  fflush(stdout);
  return fails ? 1 : 0;
}

}  // namespace smdinfo
