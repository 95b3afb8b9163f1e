#include "options.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace smdrun {
namespace {

const char kSynopsis[] =
    "Usage: smdrun -n N [options] [--] program [args...]\n";

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

// The options that take a value, with their long spelling for messages.
enum class Key { kNranks, kTimeout, kGrace, kMasterAddr, kMasterPort, kNodes, kBindTo };

struct ValueOption {
  const char *name;
  Key key;
};

constexpr ValueOption kValueOptions[] = {
    {"-n", Key::kNranks},           {"--nranks", Key::kNranks},
    {"--timeout", Key::kTimeout},   {"--grace", Key::kGrace},
    {"--master-addr", Key::kMasterAddr},
    {"--master-port", Key::kMasterPort},
    {"--nodes", Key::kNodes},
    {"--bind-to", Key::kBindTo},
};

std::optional<int> parse_int(const std::string &text) {
  int value = 0;
  const char *end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

std::optional<double> parse_seconds(const std::string &text) {
  if (text.empty()) return std::nullopt;
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (*end != '\0' || !std::isfinite(value) || value < 0) return std::nullopt;
  return value;
}

// Stores one option's value; returns an error message, empty when fine.
std::string apply(Options &options, Key key, const std::string &name,
                  const std::string &value) {
  auto bad = [&](const char *what) {
    return "option '" + name + "' needs " + what + ", got '" + value + "'";
  };
  switch (key) {
    case Key::kNranks: {
      auto n = parse_int(value);
      if (!n || *n < 1) return bad("a rank count of at least 1");
      options.nranks = *n;
      return {};
    }
    case Key::kTimeout:
    case Key::kGrace: {
      auto s = parse_seconds(value);
      if (!s) return bad("a number of seconds >= 0");
      if (key == Key::kGrace)
        options.grace_s = *s;
      else if (*s > 0)
        options.timeout_s = *s;
      else
        options.timeout_s.reset();
      return {};
    }
    case Key::kMasterAddr:
      if (value.empty()) return bad("an address");
      options.master_addr = value;
      return {};
    case Key::kMasterPort: {
      auto p = parse_int(value);
      if (!p || *p < 1 || *p > 65535) return bad("a port in 1..65535");
      options.master_port = *p;
      return {};
    }
    case Key::kNodes: {
      auto k = parse_int(value);
      if (!k || *k < 1) return bad("a node count of at least 1");
      options.nodes = *k;
      return {};
    }
    case Key::kBindTo:
      if (value != "core" && value != "none") return bad("core or none");
      options.bind_core = value == "core";
      return {};
  }
  return {};
}

// Matches `arg` against a value option: "--opt value", "--opt=value" or,
// for the short "-n", "-n4". Sets `inline_value` when the value is inside arg.
const ValueOption *match_value_option(const std::string &arg,
                                      std::optional<std::string> &inline_value) {
  for (const ValueOption &opt : kValueOptions) {
    std::string_view name = opt.name;
    if (arg == name) return &opt;
    if (arg.size() > name.size() && arg.compare(0, name.size(), name) == 0) {
      bool is_long = name.size() > 2;
      if (is_long && arg[name.size()] != '=') continue;
      inline_value = arg.substr(name.size() + (is_long ? 1 : 0));
      return &opt;
    }
  }
  return nullptr;
}

ParseResult usage_error(std::string message) {
  ParseResult result;
  result.status = ParseStatus::kUsageError;
  result.error = std::move(message);
  return result;
}

}  // namespace

ParseResult parse_options(const std::vector<std::string> &args) {
  ParseResult result;
  Options &options = result.options;
  bool have_nranks = false;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') break;  // the program
    if (arg == "-h" || arg == "--help") {
      result.status = ParseStatus::kHelp;
      return result;
    }
    if (arg == "--version") {
      result.status = ParseStatus::kVersion;
      return result;
    }
    if (arg == "--tag-output" || arg == "--no-tag-output") {
      options.tag_output = arg == "--tag-output";
      continue;
    }
    std::optional<std::string> value;
    const ValueOption *opt = match_value_option(arg, value);
    if (!opt) return usage_error("unknown option '" + arg + "'");
    if (!value) {
      if (i + 1 >= args.size())
        return usage_error("option '" + arg + "' needs a value");
      value = args[++i];
    }
    std::string error = apply(options, opt->key, opt->name, *value);
    if (!error.empty()) return usage_error(error);
    have_nranks |= opt->key == Key::kNranks;
  }
  options.command.assign(args.begin() + static_cast<long>(i), args.end());
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
