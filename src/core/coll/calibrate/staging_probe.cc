#include "core/coll/calibrate/staging_probe.h"

#include <cmath>
#include <vector>

#include "core/coll/collective.h"
#include "core/coll/algorithms/blocks/stream_copy.h"
#include "core/comm/communicator.h"
#include "core/util/clock.h"
#include "core/util/log.h"

namespace smd {

namespace {

constexpr size_t kSmallest = 4 * 1024, kLargest = 256 * 1024;
constexpr int kCalls = 32;  // calls timed together
constexpr int kTries = 3;   // blocks of each kind; the fastest counts
// Streaming must win by a quarter: where it loses, it loses by two or
// three times, and on a VM whose vCPUs move between cores a probe may run
// in a period where cache-line transfers are slow (docs/PERFORMANCE.md).
constexpr double kMargin = 0.75;

// ns per call of `calls` calls of `a`.
double time_calls(Comm &comm, const CollArgs &a, int calls) {
  int64_t t0 = now_ns();
  for (int i = 0; i < calls; ++i) run_collective(comm, a);
  return static_cast<double>(now_ns() - t0) / calls;
}

}  // namespace

bool staging_probe_due(Comm &comm, const Calibration &c) {
  return comm.arena() && comm.size() >= 2 && c.origin == "measured now" && c.line_rtt_us > 0 &&
         c.stage_stream_min_bytes == 0;
}

void probe_staging(Comm &comm, Calibration &c) {
  int64_t t0 = now_ns();
  std::vector<size_t> sizes;
  for (size_t s = kSmallest; s <= kLargest; s *= 2) sizes.push_back(s);
  std::vector<float> in(kLargest / sizeof(float), 1.0f), out(in.size());
  CollArgs a = internal_call(CollKind::kAllreduce, in.data(), out.data(), 0, SMD_FLOAT32);
  // best[2 * i + streaming]: the fastest block of size i, ns per call.
  std::vector<double> best(2 * sizes.size(), INFINITY);
  for (size_t i = 0; i < sizes.size(); ++i) {
    a.count = sizes[i] / sizeof(float);
    for (int t = 0; t < kTries; ++t)
      for (int streaming = 0; streaming < 2; ++streaming) {
        ForcedStaging forced(streaming != 0);
        if (t == 0) time_calls(comm, a, 2);  // the first calls fault pages in
        best[2 * i + streaming] = std::min(best[2 * i + streaming], time_calls(comm, a, kCalls));
      }
  }
  // Every member decides on the same sums, so all adopt the same range.
  std::vector<double> sum(best.size());
  run_collective(
      comm, internal_call(CollKind::kAllreduce, best.data(), sum.data(), best.size(), SMD_FLOAT64));

  std::vector<bool> wins;
  for (size_t i = 0; i < sizes.size(); ++i) {
    SMD_TRACE("calibrate", "staging %zu-byte allreduce: ordinary %.2f us, streaming %.2f us",
              sizes[i], sum[2 * i] / comm.size() / 1000, sum[2 * i + 1] / comm.size() / 1000);
    wins.push_back(sum[2 * i + 1] < kMargin * sum[2 * i]);
  }
  // The first run of sizes that streaming wins, its ends halfway (in
  // ratio) to the neighbouring sizes it loses.
  size_t first = 0;
  while (first < wins.size() && !wins[first]) ++first;
  if (first == wins.size()) {
    c.stage_stream_min_bytes = c.stage_stream_max_bytes = -1;
  } else {
    size_t last = first;
    while (last + 1 < wins.size() && wins[last + 1]) ++last;
    c.stage_stream_min_bytes =
        first == 0 ? static_cast<double>(sizes[0]) : std::round(std::sqrt(2.0) * sizes[first - 1]);
    c.stage_stream_max_bytes =
        last + 1 == sizes.size() ? -1 : std::round(std::sqrt(2.0) * sizes[last]);
  }
  SMD_INFO("calibrate", "staging probe in %.1f ms: streaming stores for rounds of %g .. %g bytes",
           (now_ns() - t0) / 1e6, c.stage_stream_min_bytes, c.stage_stream_max_bytes);
}

}  // namespace smd
