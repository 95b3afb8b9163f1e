// One collective run for real on rank threads over the inproc transport,
// its messages recorded (SMD_INPROC_TRACE) for replay.h. Sets process
// environment (SMD_TRANSPORT, SMD_RANKS_PER_NODE, SMD_TUNING_FILE,
// SMD_INPROC_TRACE, SMD_ALGO) before smd's first call, so a process runs
// one of these: smd-sim starts itself once per call it replays.
#pragma once

#include <string>
#include <vector>

#include "replay.h"

namespace smdsim {

struct ScheduleCall {
  std::string collective;  // smd's name
  double bytes = 0;        // as smd-sim's --sizes: per rank's block for allgather, ...
  int element_bytes = 4;
  int ranks = 2, ranks_per_node = 1;
  std::string tuning_text;  // the engine's cost model (Engine::tuning_text)
  std::string algorithm;    // forced (SMD_ALGO), or empty: the engine's choice
};

struct ScheduleTrace {
  std::string algorithm;  // what rank 0's statistics say ran
  std::vector<RankTrace> ranks;
};

// Runs the call twice (the first forms the hierarchy and any other state)
// and keeps the second's messages. Throws std::runtime_error with the
// failing rank's message.
ScheduleTrace record_schedule(const ScheduleCall &call);

}  // namespace smdsim
