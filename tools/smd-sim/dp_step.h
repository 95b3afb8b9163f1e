// The time of one data-parallel training step on a given world: the
// engine's collectives (each bucket's algorithm and predicted time)
// scheduled against the step's computation, one collective at a time on
// one communication stream, each as soon as its input is ready.
#pragma once

#include <functional>
#include <string>

#include "cluster.h"

namespace smdsim {

// Predicted microseconds of `collective` on `count` elements of the
// workload's element size; sets *algorithm to the engine's choice.
using CollectiveTime =
    std::function<double(const std::string &collective, double count, std::string *algorithm)>;

struct StepTime {
  double step_ms = 0;
  double compute_ms = 0;
  double communication_ms = 0;  // sum of the collectives' times
  double exposed_ms = 0;        // step_ms - compute_ms: what compute did not hide
  std::string algorithms;       // "allreduce=hierarchical" (every distinct choice)
};

// data_parallel: the backward pass makes buckets ready at even intervals,
// in order; bucket k's allreduce starts when it is ready and the stream is
// free. sharded: bucket k's forward (and, in reverse order, backward)
// computation waits for its allgather; its gradients' reduce_scatter
// starts after its backward computation. `ranks` divides the buckets for
// the sharded collectives (count per rank, rounded up).
StepTime simulate_step(const Workload &w, int ranks, const CollectiveTime &time_of);

}  // namespace smdsim
