#include "core/coll/calibrate/pair_probes.h"

#include <sched.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <vector>

#include "core/comm/communicator.h"
#include "core/exec/futex.h"
#include "core/util/clock.h"
#include "core/util/log.h"

namespace smd {

namespace {

uint64_t token(uint64_t round, uint64_t i) { return (round << 20) | i; }
constexpr uint64_t kDone = (1u << 20) - 1;
constexpr uint64_t kSpins = 2000;  // polls before a wait counts as not spinning

// Spins (what a trip measures), then yields the core (the partner may
// need it); the communicator's waiting policy (timeouts, aborts) has a
// turn now and then. It never sleeps: the partner's store rings no bell.
// False when the wait outlasted `spins` polls (the partner was not running).
bool wait_for(const std::atomic<uint64_t> &v, uint64_t at_least, Waiter &w, uint64_t spins) {
  w.start();
  uint64_t i = 0;
  for (; v.load(std::memory_order_acquire) < at_least; ++i) {
    if (i < spins) cpu_relax();
    else if (i % 256) sched_yield();
    else w.pause();
  }
  return i < spins;
}

}  // namespace

void PairProbe::start() { wait_for(peer_.pong, token(round_, 0), w_, kSpins); }

bool PairProbe::trip() {
  if (next_ >= kDone - 1) return false;  // out of tokens: counts as not measured
  uint64_t t = token(round_, next_++);
  out_.token.store(t, std::memory_order_release);
  return wait_for(peer_.pong, t, w_, kSpins);
}

double PairProbe::best_trip_ns(int batch, int max_batches, int64_t budget_ns) {
  int64_t best = INT64_MAX;
  int64_t end = now_ns() + budget_ns;
  for (int b = 0; b < max_batches && now_ns() < end; ++b) {
    int64_t t0 = now_ns();
    bool spun = true;
    for (int k = 0; k < batch; ++k) spun = trip() && spun;
    // A batch the scheduler interrupted is slower, never faster, than the
    // transfers themselves: the fastest batch is the measurement.
    if (spun) best = std::min(best, now_ns() - t0);
  }
  return best == INT64_MAX ? -1 : static_cast<double>(best) / batch;
}

double PairProbe::line_rtt_us() {
  double ns = best_trip_ns(16, 100, 5 * 1000 * 1000);
  if (ns < 0) {
    SMD_INFO("calibrate",
             "the ping-pong partner was never running at the same time: "
             "cache-line latency not measured");
    return 0;
  }
  return ns / 1000.0;
}

// A small read's time and a large one's bandwidth (both the best of a few).
void PairProbe::measure_cma(Calibration &c) {
  std::vector<uint8_t> local(peer_.len);
  auto read = [&](size_t bytes) {
    iovec l{local.data(), bytes}, r{reinterpret_cast<void *>(peer_.addr), bytes};
    int64_t t0 = now_ns();
    ssize_t got = process_vm_readv(static_cast<pid_t>(peer_.pid), &l, 1, &r, 1, 0);
    return got == static_cast<ssize_t>(bytes) ? std::max<int64_t>(now_ns() - t0, 1) : -1;
  };
  int64_t small = INT64_MAX, large = INT64_MAX;
  for (int i = 0; i < 20; ++i) {
    int64_t t = read(64);
    if (t < 0) {
      SMD_INFO("calibrate", "cross-memory attach refused (%s): no cma link", strerror(errno));
      return;
    }
    small = std::min(small, t);
  }
  for (int i = 0; i < 5; ++i) {
    int64_t t = read(peer_.len);
    if (t < 0) return;
    large = std::min(large, t);
  }
  c.cma_alpha_us = small / 1000.0;
  c.cma_gbps = static_cast<double>(peer_.len) / static_cast<double>(large);
}

void PairProbe::finish() { out_.token.store(token(round_, kDone), std::memory_order_release); }

void answer_probes(const PingLine &in, Answer &me, uint8_t *own, size_t own_len, uint64_t round,
                   Waiter &w) {
  me.pid = getpid();
  me.addr = reinterpret_cast<uint64_t>(own);
  me.len = own_len;
  me.pong.store(token(round, 0), std::memory_order_release);
  for (uint64_t i = 1;; ++i) {
    wait_for(in.token, token(round, i), w, kSpins);
    uint64_t v = in.token.load(std::memory_order_acquire);
    if (v == token(round, kDone)) return;
    me.pong.store(v, std::memory_order_release);
  }
}

}  // namespace smd
