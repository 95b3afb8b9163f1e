// The leader's own measurements (copies, streaming crossover), the values
// as named fields, and how they turn into link costs.
#include "core/coll/calibrate/calibration.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/coll/select/cost_model.h"
#include "core/coll/algorithms/blocks/stream_copy.h"
#include "core/util/clock.h"
#include "core/util/error.h"
#include "core/util/params.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace smd {

namespace {

// Each value's plausible range on any machine, so that a cache file
// someone edited cannot steer the cost model (a huge cache-line latency
// flips the choice of algorithm, a denormal bandwidth predicts an infinite
// time) or overflow the integer a size is converted to. 0 is "not
// measured" for every field; the staging range also has -1.
constexpr double kMaxBytes = 1ull << 40;
struct Field {
  const char *key;
  double Calibration::*member;
  double min, max;
  bool integral, minus_one;
};
const Field kFields[] = {
    {"copy_cache_gbps", &Calibration::copy_cache_gbps, 0.01, 1e5, false, false},
    {"copy_memory_gbps", &Calibration::copy_memory_gbps, 0.01, 1e5, false, false},
    {"line_rtt_us", &Calibration::line_rtt_us, 1e-3, 1e3, false, false},
    {"cma_alpha_us", &Calibration::cma_alpha_us, 1e-3, 1e5, false, false},
    {"cma_gbps", &Calibration::cma_gbps, 0.01, 1e5, false, false},
    {"stream_min_bytes", &Calibration::stream_min_bytes, 1, kMaxBytes, true, false},
    {"stage_stream_min_bytes", &Calibration::stage_stream_min_bytes, 1, kMaxBytes, true, true},
    {"stage_stream_max_bytes", &Calibration::stage_stream_max_bytes, 1, kMaxBytes, true, true},
};

// Evicts [p, p + bytes) from every cache level, so the next copy reads
// and writes memory whatever the size of the last-level cache.
void evict(const uint8_t *p, size_t bytes) {
#if defined(__x86_64__)
  for (size_t off = 0; off < bytes; off += 64) _mm_clflush(p + off);
  _mm_mfence();
#else
  (void)p;
  (void)bytes;
#endif
}

// One line of every 64 bytes read: what a caller reading its output does.
uint64_t touch(const uint8_t *p, size_t bytes) {
  uint64_t sum = 0;
  for (size_t off = 0; off < bytes; off += 64) sum += p[off];
  return sum;
}

// Keeps the reads above from being optimised out (atomic: two threads may
// create communicators at once).
std::atomic<uint64_t> g_sink;
// Called through a pointer the compiler cannot see through, so that
// repeated copies of the same bytes are not merged into one.
void *(*volatile g_memcpy)(void *, const void *, size_t) = memcpy;

template <class F>
int64_t best_ns(int reps, F &&f) {
  int64_t best = INT64_MAX;
  for (int i = 0; i < reps; ++i) {
    int64_t t0 = now_ns();
    f();
    best = std::min(best, now_ns() - t0);
  }
  return std::max<int64_t>(best, 1);
}

double gbps(double bytes, int64_t ns) { return bytes / static_cast<double>(ns); }

}  // namespace

std::vector<std::pair<std::string, double>> Calibration::entries() const {
  std::vector<std::pair<std::string, double>> out;
  for (const Field &f : kFields) out.emplace_back(f.key, this->*f.member);
  return out;
}

std::string Calibration::range_problem(const std::string &key, double value) {
  for (const Field &f : kFields) {
    if (key != f.key) continue;
    bool ok = value == 0 || (f.minus_one && value == -1) ||
              (value >= f.min && value <= f.max && (!f.integral || value == std::floor(value)));
    if (ok) return "";
    return format("%s = %g is outside its range (0, %s%g to %g%s)", f.key, value,
                  f.minus_one ? "-1, " : "", f.min, f.max, f.integral ? ", whole numbers" : "");
  }
  return format("%s is not a calibration value", key.c_str());
}

bool Calibration::set(const std::string &key, double value) {
  for (const Field &f : kFields)
    if (key == f.key) {
      this->*f.member = value;
      return true;
    }
  return false;
}

CalibrateMode calibrate_mode() {
  std::string v = param_string("SMD_CALIBRATE");
  if (v == "auto") return CalibrateMode::kAuto;
  if (v == "off") return CalibrateMode::kOff;
  if (v == "force") return CalibrateMode::kForce;
  fail(SMD_ERR_INVALID_ARGUMENT, "SMD_CALIBRATE=%s: expected auto, off or force", v.c_str());
}

void measure_copies(Calibration &c) {
  // Budget: a 128 KiB copy stays in any second-level cache; 8 MiB buffers
  // are flushed before each copy, which makes them "memory" on a CPU with
  // a last-level cache of any size (faulting 16 MiB in costs a few ms).
  constexpr size_t kSmall = 128 * 1024, kLarge = 8 * 1024 * 1024;
  std::vector<uint8_t> src(kLarge), dst(kLarge);
  memset(src.data(), 1, kLarge);
  memset(dst.data(), 2, kLarge);

  memcpy(dst.data(), src.data(), kSmall);  // warm
  int64_t ns = best_ns(5, [&] {
    for (int i = 0; i < 8; ++i) {
      g_memcpy(dst.data(), src.data(), kSmall);
      g_sink.store(dst[static_cast<size_t>(i) * 64], std::memory_order_relaxed);
    }
  });
  c.copy_cache_gbps = gbps(8.0 * kSmall, ns);

  int64_t cold = INT64_MAX;
  for (int i = 0; i < 3; ++i) {
    evict(src.data(), kLarge);
    evict(dst.data(), kLarge);
    cold = std::min(cold, best_ns(1, [&] { g_memcpy(dst.data(), src.data(), kLarge); }));
  }
  c.copy_memory_gbps = gbps(kLarge, cold);

  // The streaming-store crossover: a copy followed by the caller reading
  // its output (which streaming stores left in memory) at growing sizes;
  // the threshold is the smallest size from which streaming wins at every
  // measured size. The source comes from memory, as a large output's does.
  const size_t sizes[] = {512 * 1024, 2 * 1024 * 1024, kLarge};
  size_t crossover = 0;
  for (size_t s : sizes) {
    auto timed = [&](bool streaming) {
      return best_ns(2, [&] {
        evict(src.data(), s);
        if (streaming) stream_copy(dst.data(), src.data(), s);
        else g_memcpy(dst.data(), src.data(), s);
        g_sink.store(touch(dst.data(), s), std::memory_order_relaxed);
      });
    };
    bool streams_win = timed(true) < timed(false);
    if (streams_win && crossover == 0) crossover = s;
    if (!streams_win) crossover = 0;
  }
  // Never won up to the largest size: the next step (2x) beyond it.
  c.stream_min_bytes = static_cast<double>(crossover ? crossover : 2 * kLarge);
}

void apply_calibration(const Calibration &c, CostModel &m) {
  if (!c.measured()) return;
  // An arena step takes a few line transfers (post, descriptor, consume:
  // three round trips) and moves its bytes at copy speed; the staged
  // rounds stay in cache but user buffers of the sizes where bandwidth
  // matters do not.
  if (c.line_rtt_us > 0) m.arena.alpha_us = 3 * c.line_rtt_us;
  m.arena.gbps = c.copy_memory_gbps;
  // Point-to-point messages in a node are copied twice (into the
  // transport's buffer and out) and pipelined in pieces, each a message
  // with its own handshake: a fraction of one copy's bandwidth end to end
  // (a fifth: the ratio of the two links' defaults).
  m.local.gbps = c.copy_memory_gbps / 5;
  // The cma link stays at its default: the probe times one reader alone,
  // and a cma collective has every member reading at once while each
  // waits for its own readers, which measured well below that figure
  // (docs/PERFORMANCE.md). Auto picks cma only from SMD_TUNING_FILE keys
  // until a probe times the collective itself.
  (void)c.cma_gbps;
}

}  // namespace smd
