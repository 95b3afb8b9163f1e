#include "options.h"

#include <optional>
#include <vector>

#include "../common/cli_args.h"
#include "arena.h"

namespace tcheck {

void print_usage(FILE *f) {
  fprintf(f,
          "usage: smd-transport-check [-n NPROCS] [--only TEST[,TEST...]] "
          "[--list]\n"
          "                           [--timeout S] [--bench] [-v] PLUGIN.so\n"
          "\n"
          "Runs the transport plugin conformance tests through the plugin ABI\n"
          "alone, in NPROCS forked processes (default 2) on this machine.\n"
          "\n"
          "  -n NPROCS      number of ranks (2..%d)\n"
          "  --only TESTS   run only these tests (connect_all and finalize always run)\n"
          "  --list         list the tests and exit\n"
          "  --timeout S    limit for each test in seconds (default: per test)\n"
          "  --bench        measure latency and bandwidth between ranks 0 and 1\n"
          "  -v             verbose: plugin log lines and per-rank notes\n"
          "\n"
          "Exit status: 0 all passed, 1 a test failed, 2 usage or plugin error.\n",
          kMaxRanks);
}

namespace {

// -h or --help, wherever it stands before an error.
struct HelpAsked {};

int int_in(const std::string &text, int lo, int hi, const std::string &error) {
  std::optional<int> v = smdtools::to_int(text);
  if (!v || *v < lo || *v > hi) throw smdtools::usage_problem(error);
  return *v;
}

void add_options(CLI::App &app, Options *o) {
  smdtools::add_value_option(app, "-n", [o](const std::string &v) {
    o->nranks = int_in(v, 2, kMaxRanks, "-n " + v + ": expected 2.." + std::to_string(kMaxRanks));
  });
  smdtools::add_value_option(app, "--only", [o](const std::string &list) {
    for (size_t start = 0; start <= list.size();) {
      size_t comma = list.find(',', start);
      if (comma == std::string::npos) comma = list.size();
      if (comma > start) o->only.push_back(list.substr(start, comma - start));
      start = comma + 1;
    }
  });
  smdtools::add_value_option(app, "--timeout", [o](const std::string &v) {
    o->timeout_s = int_in(v, 1, 86400, "--timeout " + v + ": expected seconds");
  });
  smdtools::add_plain_flag(app, "--list", [o] { o->list = true; });
  smdtools::add_plain_flag(app, "--bench", [o] { o->bench = true; });
  smdtools::add_plain_flag(app, "-v,--verbose", [o] { o->verbose = true; });
  smdtools::add_plain_flag(app, "-h,--help", [] { throw HelpAsked{}; });
  app.add_option_function<std::string>(
      "plugin", [o](const std::string &v) { o->plugin = smdtools::value_of(v); });
}

}  // namespace

bool parse_options(int argc, char **argv, Options *o, bool *help, std::string *error) {
  *help = false;
  std::vector<std::string> args(argv + 1, argv + argc);
  CLI::App app("smd-transport-check", "smd-transport-check");
  app.set_help_flag();
  add_options(app, o);
  try {
    smdtools::parse_args(app, args);
  } catch (const HelpAsked &) {
    *help = true;
    return true;
  } catch (const CLI::ExtrasError &) {
    std::string first = smdtools::remaining_args(app).front();
    *error = first.rfind('-', 0) == 0 ? "unknown option " + first : "more than one plugin given";
    return false;
  } catch (const CLI::ParseError &e) {
    *error = smdtools::describe_cli_error(
        app, e, args, [](const std::string &name) { return name + " needs a value"; });
    return false;
  }
  if (o->plugin.empty() && !o->list) {
    *error = "no plugin given";
    return false;
  }
  return true;
}

}  // namespace tcheck
