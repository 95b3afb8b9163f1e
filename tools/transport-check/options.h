// The command line of smd-transport-check.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace tcheck {

struct Options {
  int nranks = 2;
  std::vector<std::string> only;  // test names; empty: all
  bool list = false;
  bool bench = false;
  bool verbose = false;
  int timeout_s = 0;  // per test; 0: each test's own limit
  std::string plugin;
};

// False with a message on bad usage; `help` set for -h/--help.
bool parse_options(int argc, char **argv, Options *o, bool *help, std::string *error);
void print_usage(FILE *f);

}  // namespace tcheck
