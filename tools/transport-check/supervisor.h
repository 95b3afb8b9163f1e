// The parent process: forks the ranks, watches every test against its time
// limit, notices ranks that die, prints one line per test and decides the
// exit status.
#pragma once

#include "options.h"
#include "plugin_table.h"
#include "worker.h"

namespace tcheck {

// Returns the process exit status: 0 if every test passed or was skipped.
int supervise(const LoadedPlugin &plugin, const Options &o, const Plan &plan);

}  // namespace tcheck
