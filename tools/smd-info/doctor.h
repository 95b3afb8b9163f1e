// smd-info doctor's checks: each looks at one thing smd needs from the
// machine and says OK, WARN (works, but slower or with less) or FAIL
// (something will not work), with the reason and what to do.
#pragma once

#include <string>
#include <vector>

namespace smdinfo {

enum class Verdict { kOk, kWarn, kFail };

struct CheckResult {
  std::string item;  // "plugins", "transport tcp", "/dev/shm", ...
  Verdict verdict = Verdict::kOk;
  std::string detail;  // what was found, or why it fails
  std::string fix;     // what to do; empty when OK
};

const char *verdict_name(Verdict v);  // "OK", "WARN", "FAIL"

// doctor_checks.cc: the machine and the installation.
std::vector<CheckResult> check_plugins(std::vector<std::string> *loadable);
CheckResult check_dev_shm();
CheckResult check_cross_memory_attach();
CheckResult check_hwloc();
CheckResult check_cuda();
CheckResult check_store_port();

// doctor_transports.cc: two processes forked from this one form a world
// over `transport` and allreduce a small and a large vector.
CheckResult check_transport(const std::string &transport);

}  // namespace smdinfo
