// Forms a world of forked processes through the public API only: each
// rank gets the SMD_* launcher environment smdrun would give it, calls
// smd_comm_init(NULL, ...) and reports what happened.
#pragma once

#include <smd.h>

#include <string>
#include <utility>
#include <vector>

namespace smd::test {

struct RankOutcome {
  int result = -1;    // smd_comm_init's result; -1 if the rank never said
  std::string error;  // smd_last_error() after it, or how the rank ended
};

// Forks `nranks` processes that share a fresh store port and job token,
// with SMD_TIMEOUT=5 and the extra variables in `env` ("%r" in a value
// becomes the rank: SMD_NODE_ID=node-%r puts every rank on its own node);
// a world that forms is destroyed again. Returns each rank's outcome, in
// rank order.
std::vector<RankOutcome> init_forked_world(
    int nranks, const std::vector<std::pair<std::string, std::string>> &env);

}  // namespace smd::test
