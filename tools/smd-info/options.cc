#include "options.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace smdinfo {

const char *const kUsage =
    "usage: smd-info COMMAND [options]\n"
    "\n"
    "commands:\n"
    "  groups     model-parallel rank groups of a layout, computed without launching\n"
    "  topology   where every rank runs (start it under smdrun or another launcher)\n"
    "  params     the SMD_* configuration variables of the core and of every plugin\n"
    "  doctor     checks this machine and installation: plugins, transports, /dev/shm, ...\n"
    "  plugins    every transport plugin found, where, and whether it loads\n"
    "  version    library version, ABI, git describe and build options (also --version)\n"
    "  flight     the flight recorder dumps of a failed job: the laggard, mismatched calls\n"
    "  trace      merges the ranks' SMD_TRACE files into one Chrome/Perfetto trace\n"
    "  help       this text (also -h, --help, after any command)\n"
    "\n"
    "smd-info groups --world W [--tp T] [--pp P] [--placement S] [--json]\n"
    "  Every rank's coordinates and groups for W ranks with tensor-parallel degree T\n"
    "  and pipeline-parallel degree P (default 1; T*P must divide W, and the\n"
    "  reduced-data-parallel degree is rdp = W/(T*P)). S is cluster (= DPT, the\n"
    "  default), spread (= TPD) or a permutation of the letters D, P, T: the\n"
    "  right-most letter varies fastest over consecutive ranks. Groups: tp (same\n"
    "  rdp_rank and pp_rank), pp (same rdp_rank and tp_rank), rdp (same pp_rank and\n"
    "  tp_rank), dp (same pp_rank), mp (same rdp_rank); a rank's dp_rank and mp_rank\n"
    "  are its positions in its dp and mp groups, members in ascending rank order.\n"
    "  --json prints one array with an object per rank: rank, rdp_rank, pp_rank,\n"
    "  tp_rank, dp_rank, mp_rank, tp_group, pp_group, rdp_group, dp_group, mp_group.\n"
    "\n"
    "smd-info groups --world W [--tp T] [--pp P] --nodes N --ranks-per-node L\n"
    "                [--heaviest K] [--placement S] [--json]\n"
    "  Placement advisor. Ranks sit on N nodes of L ranks in contiguous blocks\n"
    "  (rank r on node r / L; N*L must equal W). For every placement (the six\n"
    "  permutations; DPT is cluster, TPD is spread) and every group kind it counts\n"
    "    off-node  the members not on their group's home node (the node holding\n"
    "              most of the group, the lowest such node on a tie), summed over\n"
    "              the groups of the kind: the fewest ranks that would have to move\n"
    "              for every group of that kind to sit inside one node;\n"
    "    split     the groups of the kind that span more than one node.\n"
    "  It recommends the placement with the fewest off-node members in the heaviest\n"
    "  group kind K (tp by default; also pp, dp, rdp or mp), ties broken by the\n"
    "  other kinds in the order tp, dp, pp, rdp, mp, and then by the order of the\n"
    "  table (DPT, TPD, DTP, PDT, PTD, TDP). --placement marks one row as yours.\n"
    "\n"
    "smd-info topology [--json]\n"
    "  Forms a world from the launcher's environment; rank 0 prints every rank's\n"
    "  host, node index, local rank and size, pid, NUMA node (-1: unknown, or its\n"
    "  CPUs span several) and CPU set.\n"
    "\n"
    "smd-info params [--json]\n"
    "  Every variable: name, the value in effect here and its origin (environment or\n"
    "  default), type, default, who declares it (core, or the plugin) and meaning;\n"
    "  then the link costs of the algorithm choice (tuning: ..., origin default or\n"
    "  tuning file, from SMD_TUNING_FILE).\n"
    "  Plugins are found as libsmd finds them (SMD_PLUGIN_PATH first) and loaded\n"
    "  without being initialised; one that does not load is named on stderr. --json\n"
    "  prints one array of objects with name, type, default, value, origin, source\n"
    "  and doc.\n"
    "\n"
    "smd-info doctor [--json]\n"
    "  One verdict per item, OK, WARN (works, slower or with less) or FAIL (will not\n"
    "  work), with the reason and the fix: the plugins load (and SMD_PLUGIN_PATH\n"
    "  names what exists); two local ranks form a world and allreduce over each\n"
    "  plugin that loads; /dev/shm space; cross-memory attach between sibling\n"
    "  processes (yama ptrace_scope); hwloc topology; CUDA driver and runtime\n"
    "  (dlopen); the store port (SMD_MASTER_PORT) is free. Exit status 1 when an\n"
    "  item fails. --json prints an array of objects with check, verdict, detail\n"
    "  and fix.\n"
    "\n"
    "smd-info plugins [--json]\n"
    "  Every plugin file in the search order (SMD_PLUGIN_PATH, next to libsmd, the\n"
    "  install directory): name, plugin ABI, whether it loads (and why not, or that\n"
    "  an earlier file of that name is used) and path. Exit status 1 when none is\n"
    "  found or one that would be used does not load.\n"
    "\n"
    "smd-info version [--json]\n"
    "  The library loaded (smd_get_version and its path), smd.h's version, the\n"
    "  SONAME and plugin ABI, git describe of the source tree, plugins built and\n"
    "  build options. smdrun --version prints the same build lines.\n"
    "\n"
    "smd-info flight DIR\n"
    "  Reads every smd-flight.*.json in DIR (what ranks write under SMD_DUMP_DIR when a\n"
    "  collective fails, on smd_comm_abort or a fatal signal) and prints, for each\n"
    "  communicator, each rank's last completed and last entered call (sequence\n"
    "  numbers count the communicator's collective calls from 0), the laggard (the\n"
    "  first rank, in communicator order, that entered fewer calls than the furthest\n"
    "  rank, or on a tie completed fewer), the ranks that left no dump, and every call\n"
    "  where two ranks' kind, datatype, op, count or root differ.\n"
    "\n"
    "smd-info trace OUT IN...\n"
    "  Merges trace files written with SMD_TRACE (one per rank: file.rank<R>.json) into\n"
    "  OUT, one process per rank, for chrome://tracing or ui.perfetto.dev. An IN that\n"
    "  is a directory stands for every *.rank<R>.json file in it.\n"
    "\n"
    "Exit status: 0 success, 1 a failure at run time, 2 bad usage.\n";

namespace {

int parse_int(const std::string &option, const char *text, int min) {
  errno = 0;
  char *end = nullptr;
  long v = strtol(text, &end, 10);
  if (errno || end == text || *end || v < min || v > INT_MAX)
    throw UsageError{option + " needs an integer of at least " + std::to_string(min) + ", got '" +
                     text + "'"};
  return static_cast<int>(v);
}

smd_group_kind_t parse_kind(const char *text) {
  struct {
    const char *name;
    smd_group_kind_t kind;
  } kinds[] = {{"tp", SMD_GROUP_TP}, {"pp", SMD_GROUP_PP}, {"dp", SMD_GROUP_DP},
               {"rdp", SMD_GROUP_RDP}, {"mp", SMD_GROUP_MP}};
  for (auto &k : kinds)
    if (!strcmp(text, k.name)) return k.kind;
  throw UsageError{std::string("--heaviest needs tp, pp, dp, rdp or mp, got '") + text + "'"};
}

Command parse_command(const std::string &word) {
  if (word == "groups") return Command::kGroups;
  if (word == "topology") return Command::kTopology;
  if (word == "params") return Command::kParams;
  if (word == "version" || word == "--version") return Command::kVersion;
  if (word == "plugins") return Command::kPlugins;
  if (word == "doctor") return Command::kDoctor;
  if (word == "flight") return Command::kFlight;
  if (word == "trace") return Command::kTrace;
  if (word == "help" || word == "-h" || word == "--help") return Command::kHelp;
  throw UsageError{"unknown command '" + word + "'"};
}

}  // namespace

Options parse_options(int argc, char **argv) {
  Options o;
  if (argc < 2) throw UsageError{"no command given"};
  o.command = parse_command(argv[1]);
  bool have_world = false, have_nodes = false, have_rpn = false, have_heaviest = false;
  for (int i = 2; i < argc && o.command != Command::kHelp; ++i) {
    std::string arg = argv[i], value;
    bool inline_value = false;
    if (size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg.resize(eq);
      inline_value = true;
    }
    auto next = [&]() -> const char * {
      if (inline_value) return value.c_str();
      if (i + 1 >= argc) throw UsageError{arg + " needs a value"};
      return argv[++i];
    };
    bool groups = o.command == Command::kGroups;
    if (arg == "-h" || arg == "--help") {
      o.command = Command::kHelp;
    } else if (arg == "--json" && !inline_value) {
      o.json = true;
    } else if (groups && arg == "--world") {
      o.world = parse_int(arg, next(), 1);
      have_world = true;
    } else if (groups && arg == "--tp") {
      o.tp = parse_int(arg, next(), 1);
    } else if (groups && arg == "--pp") {
      o.pp = parse_int(arg, next(), 1);
    } else if (groups && arg == "--placement") {
      o.placement = next();
      o.placement_given = true;
    } else if (groups && arg == "--nodes") {
      o.nodes = parse_int(arg, next(), 1);
      have_nodes = true;
    } else if (groups && arg == "--ranks-per-node") {
      o.ranks_per_node = parse_int(arg, next(), 1);
      have_rpn = true;
    } else if (groups && arg == "--heaviest") {
      o.heaviest = parse_kind(next());
      have_heaviest = true;
    } else if ((o.command == Command::kFlight || o.command == Command::kTrace) &&
               arg.rfind("-", 0) != 0) {
      o.paths.push_back(arg);
    } else {
      throw UsageError{"'" + std::string(argv[i]) + "' is not an option of smd-info " + argv[1]};
    }
  }
  if (o.command == Command::kFlight && o.paths.size() != 1)
    throw UsageError{"flight needs one directory"};
  if (o.command == Command::kTrace && o.paths.size() < 2)
    throw UsageError{"trace needs an output file and at least one input"};
  if (o.command != Command::kGroups) return o;
  if (!have_world) throw UsageError{"groups needs --world W"};
  if (have_nodes != have_rpn) throw UsageError{"--nodes and --ranks-per-node go together"};
  if (have_heaviest && !have_nodes) throw UsageError{"--heaviest needs --nodes and --ranks-per-node"};
  if (have_nodes && static_cast<long long>(o.nodes) * o.ranks_per_node != o.world)
    throw UsageError{"--nodes " + std::to_string(o.nodes) + " x --ranks-per-node " +
                     std::to_string(o.ranks_per_node) + " is not the world size " +
                     std::to_string(o.world)};
  return o;
}

}  // namespace smdinfo
