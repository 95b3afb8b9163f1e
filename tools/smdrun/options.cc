#include "options.h"

#include "../common/cli_args.h"

namespace smdrun {
namespace {

const char kSynopsis[] = "Usage: smdrun -n N [options] [--] program [args...]\n";

const char kHelp[] =
    "Usage: smdrun -n N [options] [--] program [args...]\n"
    "\n"
    "Launches N ranks of a program on this machine and supervises them.\n"
    "\n"
    "Options:\n"
    "  -n, --nranks N      number of ranks to start (required, N >= 1)\n"
    "  --timeout S         stop the job after S seconds: SIGTERM every rank,\n"
    "                      SIGKILL 2 s later, exit 124 (default 0: no limit)\n"
    "  --grace S           after a rank fails, give the others S seconds to\n"
    "                      exit on their own before SIGTERM, then SIGKILL\n"
    "                      2 s later (default 3)\n"
    "  --tag-output        prefix each line of a rank's output with \"[rank] \"\n"
    "                      (default)\n"
    "  --no-tag-output     pass the ranks' output through untouched\n"
    "  --master-addr A     rendezvous address given to the ranks\n"
    "                      (default 127.0.0.1)\n"
    "  --master-port P     rendezvous port (default: a free port on A)\n"
    "  --nodes K           pretend the ranks run on K nodes: rank r gets\n"
    "                      SMD_NODE_ID=node<r / ceil(N/K)> (contiguous blocks),\n"
    "                      and its local rank and size within that block;\n"
    "                      every one of the K nodes must get a rank\n"
    "  --bind-to WHAT      core: pin rank r to the (r mod C)-th of the C CPUs\n"
    "                      smdrun may run on (its own affinity mask), as\n"
    "                      mpirun's --bind-to core; none: leave placement to\n"
    "                      the kernel (default). Pinning keeps two ranks from\n"
    "                      sharing a CPU while another idles, which latency-\n"
    "                      bound runs feel most\n"
    "  -h, --help          show this text\n"
    "  --version           smd's version, ABI, git describe and build options\n"
    "Seconds may be fractional (0.5). Options also take --opt=value.\n"
    "\n"
    "Environment of every rank (torchrun's names too, so torch scripts work):\n"
    "  SMD_RANK, RANK                   0..N-1\n"
    "  SMD_WORLD_SIZE, WORLD_SIZE       N\n"
    "  SMD_LOCAL_RANK, LOCAL_RANK       = rank (rank within its node with --nodes)\n"
    "  SMD_LOCAL_SIZE, LOCAL_WORLD_SIZE = N (ranks on its node with --nodes)\n"
    "  SMD_MASTER_ADDR, MASTER_ADDR     --master-addr\n"
    "  SMD_MASTER_PORT                  --master-port or the free port found\n"
    "  MASTER_PORT                      another free port, for torch's own store\n"
    "  SMD_JOB_TOKEN                    128 random bits in hex, fresh for each\n"
    "                                   launch; passed through if smdrun's own\n"
    "                                   environment sets it\n"
    "  SMD_NODE_ID                      only with --nodes\n"
    "Ranks read stdin from /dev/null. Each rank runs in its own process group\n"
    "and is killed if smdrun dies.\n"
    "\n"
    "Output: a rank's stdout goes to smdrun's stdout and its stderr to\n"
    "smdrun's stderr, a whole line at a time (a final line without a newline\n"
    "is completed at exit; a line still unfinished after 1 MiB is split).\n"
    "\n"
    "Failures: when a rank exits non-zero or dies of a signal, smdrun says so\n"
    "on stderr, waits the grace period, then stops the rest (SIGTERM, then\n"
    "SIGKILL 2 s later). SIGINT, SIGTERM and SIGHUP sent to smdrun are\n"
    "forwarded to every rank; a second one kills them all with SIGKILL.\n"
    "After a forwarded signal smdrun goes on as before: a rank that then\n"
    "fails is reported, and once any rank has failed or died of the\n"
    "forwarded signal, the rest get the grace period, then SIGTERM.\n"
    "\n"
    "Exit status:\n"
    "  0        every rank exited 0\n"
    "  s        the first rank to fail exited with status s\n"
    "  128+k    the first rank to fail died of signal k, or smdrun received\n"
    "           signal k and forwarded it\n"
    "  124      --timeout expired\n"
    "  126/127  the program could not be run (127: not found)\n"
    "  2        bad usage\n"
    "  1        smdrun itself failed (no free port, fork failed, ...)\n";

// Checks one option's value and stores it; `name` is the spelling used.
using Apply = void (*)(Options &, const std::string &name, const std::string &value);

[[noreturn]] void bad_value(const std::string &name, const char *what, const std::string &value) {
  throw smdtools::usage_problem("option '" + name + "' needs " + what + ", got '" + value + "'");
}

using smdtools::to_int;

std::optional<double> parse_seconds(const std::string &text) {
  auto value = smdtools::to_number(text);
  if (!value || *value < 0) return std::nullopt;
  return value;
}

void apply_nranks(Options &o, const std::string &name, const std::string &value) {
  auto n = to_int(value);
  if (!n || *n < 1) bad_value(name, "a rank count of at least 1", value);
  o.nranks = *n;
}

double seconds(const std::string &name, const std::string &value) {
  auto s = parse_seconds(value);
  if (!s) bad_value(name, "a number of seconds >= 0", value);
  return *s;
}

void apply_timeout(Options &o, const std::string &name, const std::string &value) {
  double s = seconds(name, value);
  if (s > 0) o.timeout_s = s;
  else o.timeout_s.reset();
}

void apply_grace(Options &o, const std::string &name, const std::string &value) {
  o.grace_s = seconds(name, value);
}

void apply_master_addr(Options &o, const std::string &name, const std::string &value) {
  if (value.empty()) bad_value(name, "an address", value);
  o.master_addr = value;
}

void apply_master_port(Options &o, const std::string &name, const std::string &value) {
  auto p = to_int(value);
  if (!p || *p < 1 || *p > 65535) bad_value(name, "a port in 1..65535", value);
  o.master_port = *p;
}

void apply_nodes(Options &o, const std::string &name, const std::string &value) {
  auto k = to_int(value);
  if (!k || *k < 1) bad_value(name, "a node count of at least 1", value);
  o.nodes = *k;
}

void apply_bind_to(Options &o, const std::string &name, const std::string &value) {
  if (value != "core" && value != "none") bad_value(name, "core or none", value);
  o.bind_core = value == "core";
}

// Each spelling is its own CLI11 option so that messages quote the one used.
struct ValueOption {
  const char *name;
  Apply apply;
};

constexpr ValueOption kValueOptions[] = {
    {"-n", apply_nranks},
    {"--nranks", apply_nranks},
    {"--timeout", apply_timeout},
    {"--grace", apply_grace},
    {"--master-addr", apply_master_addr},
    {"--master-port", apply_master_port},
    {"--nodes", apply_nodes},
    {"--bind-to", apply_bind_to},
};

// Help and version stop the parse where they stand, before any later
// mistake is seen and before the program's own arguments.
struct Stop {
  ParseStatus status;
};

ParseResult usage_error(std::string message) {
  ParseResult result;
  result.status = ParseStatus::kUsageError;
  result.error = std::move(message);
  return result;
}

// Whether the first unconsumed argument is an option smdrun does not know
// (rather than the program, or "--" before it).
bool is_unknown_option(const std::string &arg) {
  return arg != "--" && arg.size() >= 2 && arg[0] == '-';
}

}  // namespace

ParseResult parse_options(const std::vector<std::string> &args) {
  ParseResult result;
  Options &options = result.options;
  bool have_nranks = false;
  CLI::App app("smdrun", "smdrun");
  app.set_help_flag();
  // The first argument that is not an option (or is after "--") is the
  // program: it and everything after it are left unread.
  app.prefix_command();
  for (const ValueOption &opt : kValueOptions) {
    std::string name = opt.name;
    smdtools::add_value_option(app, name, [&, name, apply = opt.apply](const std::string &value) {
      apply(options, name, value);
      have_nranks |= apply == apply_nranks;
    });
  }
  smdtools::add_plain_flag(app, "--tag-output", [&] { options.tag_output = true; });
  smdtools::add_plain_flag(app, "--no-tag-output", [&] { options.tag_output = false; });
  smdtools::add_plain_flag(app, "-h,--help", [] { throw Stop{ParseStatus::kHelp}; });
  smdtools::add_plain_flag(app, "--version", [] { throw Stop{ParseStatus::kVersion}; });
  try {
    smdtools::parse_args(app, args);
  } catch (const Stop &stop) {
    result.status = stop.status;
    return result;
  } catch (const CLI::ParseError &e) {
    return usage_error(smdtools::describe_cli_error(app, e, args, [](const std::string &name) {
      return "option '" + name + "' needs a value";
    }));
  }
  std::vector<std::string> rest = smdtools::remaining_args(app);
  if (!rest.empty() && is_unknown_option(rest.front()))
    return usage_error("unknown option '" + rest.front() + "'");
  if (!rest.empty() && rest.front() == "--") rest.erase(rest.begin());
  options.command = std::move(rest);
  if (!have_nranks) return usage_error("-n N is required (the number of ranks)");
  if (options.command.empty()) return usage_error("no program to run");
  if (options.nodes) {
    // Ranks go to nodes in blocks of ceil(N/K), which can fill fewer than K.
    int block = (options.nranks + *options.nodes - 1) / *options.nodes;
    int filled = (options.nranks + block - 1) / block;
    if (filled != *options.nodes)
      return usage_error("--nodes " + std::to_string(*options.nodes) + " with " +
                         std::to_string(options.nranks) + " ranks leaves nodes empty (" +
                         "ranks go in blocks of " + std::to_string(block) + ", filling " +
                         std::to_string(filled) + " nodes): give at most " +
                         std::to_string(filled) + " nodes or more ranks");
  }
  result.status = ParseStatus::kRun;
  return result;
}

const char *help_text() { return kHelp; }
const char *usage_synopsis() { return kSynopsis; }

}  // namespace smdrun
