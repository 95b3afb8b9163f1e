// A rank: one forked process that runs the plan of tests in order and
// writes its results into the arena.
#pragma once

#include <vector>

#include "arena.h"
#include "options.h"
#include "plugin_table.h"

namespace tcheck {

struct Plan {
  std::vector<int> tests;      // indices into test_cases(), in order
  std::vector<double> limits;  // seconds, per entry of `tests`
  double total_limit = 0;      // seconds, for the whole run
};

[[noreturn]] void run_worker(const LoadedPlugin &plugin, Arena *arena, int rank, const Options &o,
                             const Plan &plan);

}  // namespace tcheck
