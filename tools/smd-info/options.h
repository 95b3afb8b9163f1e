// smd-info's command line: the commands, their options, and the usage text.
#pragma once

#include <smd.h>

#include <string>
#include <vector>

namespace smdinfo {

// Bad usage: main() prints the message and exits with status 2.
struct UsageError {
  std::string message;
};

enum class Command {
  kHelp,
  kGroups,
  kTopology,
  kParams,
  kVersion,
  kPlugins,
  kDoctor,
  kFlight,
  kTrace
};

struct Options {
  Command command = Command::kHelp;
  bool json = false;
  // groups
  int world = 0;
  int tp = 1, pp = 1;
  std::string placement = "cluster";
  bool placement_given = false;
  // the placement advisor (groups with --nodes)
  int nodes = 0, ranks_per_node = 0;
  smd_group_kind_t heaviest = SMD_GROUP_TP;
  // flight: the dump directory; trace: the output, then inputs.
  std::vector<std::string> paths;
};

// argv as main() gets it; throws UsageError.
Options parse_options(int argc, char **argv);

extern const char *const kUsage;

}  // namespace smdinfo
