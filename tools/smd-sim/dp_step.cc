#include "dp_step.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

namespace smdsim {

namespace {

// One communication stream: each collective starts when its input is
// ready and the previous one has finished.
struct Stream {
  double free_at = 0;
  double busy = 0;
  double run(double ready, double duration) {
    free_at = std::max(free_at, ready) + duration;
    busy += duration;
    return free_at;
  }
};

}  // namespace

StepTime simulate_step(const Workload &w, int ranks, const CollectiveTime &time_of) {
  const double total_bytes = w.parameters * w.element_bytes;
  const int buckets = std::max(1, int(std::ceil(total_bytes / w.bucket_bytes)));
  const double bucket_elems = std::ceil(w.parameters / buckets);
  const double fwd_us = w.compute_ms * 1e3 * (1 - w.backward_fraction);
  const double bwd_us = w.compute_ms * 1e3 * w.backward_fraction;
  std::set<std::string> choices;
  auto timed = [&](const char *coll, double count) {
    std::string algo;
    double us = time_of(coll, count, &algo);
    choices.insert(std::string(coll) + "=" + algo);
    return us;
  };
  Stream comm;
  double compute_end = 0, comm_end = 0;
  if (w.mode == "data_parallel" || ranks == 1) {
    // Buckets become ready through the backward pass; every bucket is the
    // same size, so one prediction serves all.
    double us = ranks == 1 ? 0 : timed("allreduce", bucket_elems);
    for (int k = 0; k < buckets; ++k) comm_end = comm.run(fwd_us + bwd_us * (k + 1) / buckets, us);
    compute_end = fwd_us + bwd_us;
  } else {
    const double per_rank = std::ceil(bucket_elems / ranks);
    const double gather_us = timed("allgather", per_rank);
    const double scatter_us = timed("reduce_scatter", per_rank);
    // Forward: gathers issued in order, computation k after gather k.
    double t = 0;
    for (int k = 0; k < buckets; ++k) {
      double gathered = comm.run(0, gather_us);
      t = std::max(t, gathered) + fwd_us / buckets;
    }
    // Backward, buckets in reverse: gather k (issued ahead), compute k,
    // then reduce-scatter k. The stream runs the next bucket's gather
    // before this bucket's reduce-scatter, so computation need not wait
    // behind a reduction.
    std::vector<double> gathered(size_t(buckets), 0);
    gathered[size_t(buckets - 1)] = comm.run(t, gather_us);
    for (int k = buckets - 1; k >= 0; --k) {
      if (k > 0) gathered[size_t(k - 1)] = comm.run(t, gather_us);
      t = std::max(t, gathered[size_t(k)]) + bwd_us / buckets;
      comm_end = comm.run(t, scatter_us);
    }
    compute_end = t;
  }
  StepTime s;
  s.step_ms = std::max(compute_end, comm_end) / 1e3;
  s.compute_ms = w.compute_ms;
  s.communication_ms = comm.busy / 1e3;
  s.exposed_ms = s.step_ms - s.compute_ms;
  for (const std::string &c : choices) s.algorithms += (s.algorithms.empty() ? "" : " ") + c;
  return s;
}

}  // namespace smdsim
