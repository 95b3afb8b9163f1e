#include "options.h"

#include <optional>

#include "../common/cli_args.h"

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

int parse_int(const std::string &option, const std::string &text, int min) {
  std::optional<int> v = smdtools::to_int(text);
  if (!v || *v < min)
    throw smdtools::usage_problem(option + " needs an integer of at least " + std::to_string(min) +
                                  ", got '" + text + "'");
  return *v;
}

smd_group_kind_t parse_kind(const std::string &text) {
  struct {
    const char *name;
    smd_group_kind_t kind;
  } kinds[] = {{"tp", SMD_GROUP_TP},
               {"pp", SMD_GROUP_PP},
               {"dp", SMD_GROUP_DP},
               {"rdp", SMD_GROUP_RDP},
               {"mp", SMD_GROUP_MP}};
  for (auto &k : kinds)
    if (text == k.name) return k.kind;
  throw smdtools::usage_problem("--heaviest needs tp, pp, dp, rdp or mp, got '" + text + "'");
}

// -h or --help, wherever it stands, ends the parse with the usage text.
struct HelpAsked {};

void add_help_flag(CLI::App &app) {
  smdtools::add_plain_flag(app, "-h,--help", [] { throw HelpAsked{}; });
}

// The options of `groups`; `seen` records which were given.
struct GroupsSeen {
  bool world = false, nodes = false, rpn = false, heaviest = false;
};

void add_groups_options(CLI::App &groups, Options &o, GroupsSeen &seen) {
  auto add_int = [&](const char *name, int *value, bool *given) {
    smdtools::add_value_option(groups, name, [=](const std::string &text) {
      *value = parse_int(name, text, 1);
      if (given) *given = true;
    });
  };
  add_int("--world", &o.world, &seen.world);
  add_int("--tp", &o.tp, nullptr);
  add_int("--pp", &o.pp, nullptr);
  add_int("--nodes", &o.nodes, &seen.nodes);
  add_int("--ranks-per-node", &o.ranks_per_node, &seen.rpn);
  smdtools::add_value_option(groups, "--placement", [&](const std::string &text) {
    o.placement = text;
    o.placement_given = true;
  });
  smdtools::add_value_option(groups, "--heaviest", [&](const std::string &text) {
    o.heaviest = parse_kind(text);
    seen.heaviest = true;
  });
}

void check_groups(const Options &o, const GroupsSeen &seen) {
  if (!seen.world) throw UsageError{"groups needs --world W"};
  if (seen.nodes != seen.rpn) throw UsageError{"--nodes and --ranks-per-node go together"};
  if (seen.heaviest && !seen.nodes)
    throw UsageError{"--heaviest needs --nodes and --ranks-per-node"};
  if (seen.nodes && static_cast<long long>(o.nodes) * o.ranks_per_node != o.world)
    throw UsageError{"--nodes " + std::to_string(o.nodes) + " x --ranks-per-node " +
                     std::to_string(o.ranks_per_node) + " is not the world size " +
                     std::to_string(o.world)};
}

// What CLI11 left unread: an unknown command, or a word that is not an
// option of the command given.
UsageError extras_error(const CLI::App &app) {
  for (const CLI::App *sub : app.get_subcommands()) {
    std::vector<std::string> extra = smdtools::remaining_args(*sub);
    if (!extra.empty())
      return UsageError{"'" + extra.front() + "' is not an option of smd-info " + sub->get_name()};
  }
  std::vector<std::string> extra = smdtools::remaining_args(app);
  return UsageError{"unknown command '" + (extra.empty() ? std::string() : extra.front()) + "'"};
}

}  // namespace

Options parse_options(int argc, char **argv) {
  Options o;
  if (argc < 2) throw UsageError{"no command given"};
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.front() == "--version") args.front() = "version";  // the one command spelt as an option

  CLI::App app("smd-info", "smd-info");
  app.set_help_flag();
  app.require_subcommand(1);  // a second command word is an extra
  add_help_flag(app);
  struct {
    const char *name;
    Command command;
  } commands[] = {{"groups", Command::kGroups},   {"topology", Command::kTopology},
                  {"params", Command::kParams},   {"version", Command::kVersion},
                  {"plugins", Command::kPlugins}, {"doctor", Command::kDoctor},
                  {"flight", Command::kFlight},   {"trace", Command::kTrace},
                  {"help", Command::kHelp}};
  GroupsSeen seen;
  for (auto &c : commands) {
    CLI::App *sub = app.add_subcommand(c.name);
    sub->set_help_flag();
    add_help_flag(*sub);
    smdtools::add_plain_flag(*sub, "--json", [&o] { o.json = true; });
    sub->parse_complete_callback([&o, command = c.command] { o.command = command; });
    if (c.command == Command::kGroups) add_groups_options(*sub, o, seen);
    if (c.command == Command::kFlight || c.command == Command::kTrace)
      sub->add_option("paths", o.paths)->expected(0, -1);
    if (c.command == Command::kHelp) sub->allow_extras();  // "help" ignores the rest
  }
  try {
    smdtools::parse_args(app, args);
  } catch (const HelpAsked &) {
    o.command = Command::kHelp;
    return o;
  } catch (const CLI::ExtrasError &) {
    throw extras_error(app);
  } catch (const CLI::RequiredError &) {  // the first word is no command
    throw extras_error(app);
  } catch (const CLI::ParseError &e) {
    throw UsageError{smdtools::describe_cli_error(
        app, e, args, [](const std::string &name) { return name + " needs a value"; })};
  }
  if (o.command == Command::kFlight && o.paths.size() != 1)
    throw UsageError{"flight needs one directory"};
  if (o.command == Command::kTrace && o.paths.size() < 2)
    throw UsageError{"trace needs an output file and at least one input"};
  if (o.command == Command::kGroups) check_groups(o, seen);
  return o;
}

}  // namespace smdinfo
