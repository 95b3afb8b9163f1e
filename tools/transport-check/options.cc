#include "options.h"

#include <cstdlib>
#include <cstring>

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

static bool parse_int(const char *s, int lo, int hi, int *out) {
  char *end = nullptr;
  long v = strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < lo || v > hi) return false;
  *out = int(v);
  return true;
}

bool parse_options(int argc, char **argv, Options *o, bool *help,
                   std::string *error) {
  *help = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *name) -> const char * {
      if (i + 1 >= argc) {
        *error = std::string(name) + " needs a value";
        return nullptr;
      }
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      *help = true;
      return true;
    } else if (a == "-n") {
      const char *v = value("-n");
      if (v == nullptr) return false;
      if (!parse_int(v, 2, kMaxRanks, &o->nranks)) {
        *error = "-n " + std::string(v) + ": expected 2.." + std::to_string(kMaxRanks);
        return false;
      }
    } else if (a == "--only") {
      const char *v = value("--only");
      if (v == nullptr) return false;
      std::string list = v;
      for (size_t start = 0; start <= list.size();) {
        size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        if (comma > start) o->only.push_back(list.substr(start, comma - start));
        start = comma + 1;
      }
    } else if (a == "--timeout") {
      const char *v = value("--timeout");
      if (v == nullptr) return false;
      if (!parse_int(v, 1, 86400, &o->timeout_s)) {
        *error = "--timeout " + std::string(v) + ": expected seconds";
        return false;
      }
    } else if (a == "--list") {
      o->list = true;
    } else if (a == "--bench") {
      o->bench = true;
    } else if (a == "-v" || a == "--verbose") {
      o->verbose = true;
    } else if (!a.empty() && a[0] == '-') {
      *error = "unknown option " + a;
      return false;
    } else if (o->plugin.empty()) {
      o->plugin = a;
    } else {
      *error = "more than one plugin given";
      return false;
    }
  }
  if (o->plugin.empty() && !o->list) {
    *error = "no plugin given";
    return false;
  }
  return true;
}

}  // namespace tcheck
