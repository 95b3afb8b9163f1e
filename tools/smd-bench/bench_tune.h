// smd-bench --tune FILE: measures the three link costs of smd's cost model
// (docs/ARCHITECTURE.md, "The collective engine") on the machine at hand
// and writes them in SMD_TUNING_FILE's format.
#pragma once

#include <smd.h>

#include <string>

namespace smdbench {

// Collective over `world`; rank 0 writes `path`. Returns the exit status.
int run_tune(smd_comm_t *world, const std::string &path);

}  // namespace smdbench
