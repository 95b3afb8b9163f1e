// smd-info: what smd knows about a job without running one (model-parallel
// rank groups and the placement advisor, the configuration variables) and
// where the ranks of a running job are (topology), what is wrong with an
// installation or a machine (doctor, plugins, version), and what a failed
// or traced job left behind (flight, trace).
#include <cstdio>

#include "commands.h"
#include "json_value.h"
#include "options.h"

using namespace smdinfo;

int main(int argc, char **argv) {
  try {
    Options o = parse_options(argc, argv);
    switch (o.command) {
      case Command::kHelp: fputs(kUsage, stdout); return 0;
      case Command::kGroups: return o.nodes ? run_advisor(o) : run_groups_table(o);
      case Command::kTopology: return run_topology(o);
      case Command::kParams: return run_params(o);
      case Command::kVersion: return run_version(o);
      case Command::kPlugins: return run_plugins(o);
      case Command::kDoctor: return run_doctor(o);
      case Command::kFlight: return run_flight(o);
      case Command::kTrace: return run_trace(o);
    }
  } catch (const JsonError &e) {
    fprintf(stderr, "smd-info: %s\n", e.message.c_str());
    return 1;
  } catch (const UsageError &e) {
    fprintf(stderr, "smd-info: %s\nrun 'smd-info --help' for usage\n", e.message.c_str());
    return 2;
  }
  return 1;
}
