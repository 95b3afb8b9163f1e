// calibrate_node: the leader's values handed to every member through the
// arena, and the two-rank measurements (cache-line ping-pong, reads by
// cross-memory attach) that need a peer.
//
// Rounds (reserved alike by every member): in the first the leader posts
// either the values or "measure"; after "measure", ranks 0 and 1 ping-pong
// in the small buffers of a second round while the others wait for the
// third, where the leader posts what it measured.
#include <sched.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/coll/calibration.h"
#include "core/coll/stream_copy.h"
#include "core/comm/arena.h"
#include "core/comm/communicator.h"
#include "core/exec/futex.h"
#include "core/reduce/reduce.h"
#include "core/util/clock.h"
#include "core/util/log.h"

namespace smd {

namespace {

struct Message {
  uint64_t measure;  // 1: the values follow in a later round
  double values[8];
  char origin[32];
};
static_assert(sizeof(Message) <= Arena::kSmallBytes);

// Rank 1's line in the ping-pong round: its answer, and (on a line of its
// own) where rank 0 may read its memory by cross-memory attach.
struct Answer {
  alignas(64) std::atomic<uint64_t> pong;
  alignas(64) int64_t pid;
  uint64_t addr, len;
};
static_assert(sizeof(Answer) <= Arena::kSmallBytes);

std::mutex g_mu;
int64_t g_stream_min = -1;  // the threshold adopted so far (-1: none)
std::optional<Calibration> g_known;  // what this process last received
bool g_measured_here = false;        // this process measured (SMD_CALIBRATE=force: once)

Message to_message(const Calibration &c, bool measure) {
  Message m{};
  m.measure = measure ? 1 : 0;
  auto e = c.entries();
  for (size_t i = 0; i < e.size(); ++i) m.values[i] = e[i].second;
  snprintf(m.origin, sizeof m.origin, "%s", c.origin.c_str());
  return m;
}

Calibration from_message(const Message &m) {
  Calibration c;
  auto e = c.entries();
  for (size_t i = 0; i < e.size(); ++i) c.set(e[i].first, m.values[i]);
  c.origin = std::string(m.origin, strnlen(m.origin, sizeof m.origin));
  return c;
}

// Tokens unique to the round, so a line left over from an earlier use
// of the buffer never passes for an answer.
uint64_t token(uint64_t round, uint64_t i) { return (round << 20) | i; }
constexpr uint64_t kDone = (1u << 20) - 1;

// Spins (what a round trip measures), then yields the core (the partner
// may need it); the communicator's waiting policy (timeouts, aborts) has
// a turn now and then. It never sleeps: the partner's store rings no bell.
// False when the wait outlasted the spinning (the partner was not running).
bool wait_for(const std::atomic<uint64_t> &v, uint64_t at_least, Waiter &w) {
  constexpr uint64_t kSpins = 2000;
  w.start();
  uint64_t i = 0;
  for (; v.load(std::memory_order_acquire) < at_least; ++i) {
    if (i < kSpins) cpu_relax();
    else if (i % 256) sched_yield();
    else w.pause();
  }
  return i < kSpins;
}

// Rank 0: batches of round trips until 100 batches or 5 ms; the fastest
// batch over its trips (a batch the scheduler interrupted is slower, never
// faster, than the line transfers themselves). 0 when no batch ran with
// both ranks on a CPU at once (a busy machine, more ranks than cores):
// what it measured then was the scheduler.
double ping(std::atomic<uint64_t> &out, const std::atomic<uint64_t> &in, uint64_t round,
            Waiter &w) {
  constexpr int kBatch = 16;
  wait_for(in, token(round, 0), w);  // rank 1 is here and has published its memory
  std::vector<int64_t> batches;
  int64_t end = now_ns() + 5 * 1000 * 1000;
  for (uint64_t i = 1; batches.size() < 100 && now_ns() < end && i < kDone - kBatch;) {
    int64_t t0 = now_ns();
    bool spun = true;
    for (int k = 0; k < kBatch; ++k, ++i) {
      out.store(token(round, i), std::memory_order_release);
      spun = wait_for(in, token(round, i), w) && spun;
    }
    if (spun) batches.push_back(now_ns() - t0);
  }
  out.store(token(round, kDone), std::memory_order_release);
  if (batches.empty()) {
    SMD_INFO("calibrate", "the ping-pong partner was never running at the same time: "
                          "cache-line latency not measured");
    return 0;
  }
  return static_cast<double>(*std::min_element(batches.begin(), batches.end())) / (1000.0 * kBatch);
}

void pong(const std::atomic<uint64_t> &in, Answer &me, uint64_t round, Waiter &w) {
  me.pong.store(token(round, 0), std::memory_order_release);
  for (uint64_t i = 1;; ++i) {
    wait_for(in, token(round, i), w);
    uint64_t v = in.load(std::memory_order_acquire);
    if (v == token(round, kDone)) return;
    me.pong.store(v, std::memory_order_release);
  }
}

// Reads of rank 1's staging buffer by process_vm_readv: a small read's
// time and a large one's bandwidth (both the best of a few). Leaves the
// values at 0 where the kernel refuses (ptrace restrictions, seccomp).
void measure_cma(Calibration &c, const Answer &peer) {
  std::vector<uint8_t> local(peer.len);
  auto read = [&](size_t bytes) {
    iovec l{local.data(), bytes}, r{reinterpret_cast<void *>(peer.addr), bytes};
    int64_t t0 = now_ns();
    ssize_t got = process_vm_readv(static_cast<pid_t>(peer.pid), &l, 1, &r, 1, 0);
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
    int64_t t = read(peer.len);
    if (t < 0) return;
    large = std::min(large, t);
  }
  c.cma_alpha_us = small / 1000.0;
  c.cma_gbps = static_cast<double>(peer.len) / static_cast<double>(large);
}

// Zeroes this member's ping-pong line of `round` before the member posts
// the round before it (after which the partner reads the line).
void clear_line(Arena &a, uint64_t round, Waiter &w) {
  a.wait_reusable(round, false, w);
  memset(a.small_buf(a.rank(), round), 0, sizeof(Answer));
}

// The crossover was measured with one copy using the caches alone; an
// operation's output competes with its input and with every other rank of
// the node doing the same, so it streams from the crossover divided by the
// ranks sharing the node. The smallest over this process's communicators
// (a larger one's ops may follow a smaller one's). A reduction's working
// set (inputs and output) overflows where one copy's (source and
// destination) did.
void adopt_copy_heuristics(const Calibration &c, int node_ranks) {
  auto crossover = static_cast<int64_t>(c.stream_min_bytes);
  int64_t mine = crossover / std::max(node_ranks, 1);
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_stream_min < 0 || mine < g_stream_min) g_stream_min = mine;
  adopt_stream_min_bytes(g_stream_min);
  reduce::set_streaming_working_set(2 * static_cast<size_t>(crossover));
}

// What the leader has without measuring, or nullopt.
std::optional<Calibration> known_to_leader(CalibrateMode mode) {
  if (mode == CalibrateMode::kOff) return Calibration{};
  std::lock_guard<std::mutex> lock(g_mu);
  if (mode == CalibrateMode::kForce && !g_measured_here) return std::nullopt;
  if (g_known) return g_known;
  if (mode == CalibrateMode::kForce) return std::nullopt;
  return read_calibration(calibration_cache_path(), calibration_key());
}

}  // namespace

std::optional<Calibration> process_calibration() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_known;
}

Calibration calibrate_node(Comm &comm) {
  Arena &a = *comm.arena();
  CalibrateMode mode = calibrate_mode();  // a bad value fails on every member alike
  Waiter w(comm, "calibration", SleepOn::kArena);
  bool leader = a.rank() == 0;
  uint64_t first = a.reserve_rounds(1);
  a.wait_reusable(first, true, w);
  Calibration c;
  bool measure = false;
  if (leader) {
    std::optional<Calibration> known = known_to_leader(mode);
    measure = !known;
    if (known) c = *known;
    Message m = to_message(c, measure);
    memcpy(a.small_buf(0, first), &m, sizeof m);
    if (measure) clear_line(a, first + 1, w);
    a.post(first);
  } else {
    a.wait_posted_by(0, first, w);
    Message m;
    memcpy(&m, a.small_buf(0, first), sizeof m);
    measure = m.measure != 0;
    c = from_message(m);
    if (measure && a.rank() == 1) clear_line(a, first + 1, w);
    a.post(first);
  }
  a.post_consumed(first);

  if (measure) {
    int64_t t0 = now_ns();
    uint64_t pp = a.reserve_rounds(2), result = pp + 1;
    auto &ping_line = *reinterpret_cast<std::atomic<uint64_t> *>(a.small_buf(0, pp));
    if (a.rank() == 1) {
      Answer &me = *reinterpret_cast<Answer *>(a.small_buf(1, pp));
      me.pid = getpid();
      me.addr = reinterpret_cast<uint64_t>(a.buf(1, pp));
      me.len = a.chunk();
      pong(ping_line, me, pp, w);
    } else if (leader) {
      a.wait_posted_by(1, first, w);  // its answer line is clear
      Answer &peer = *reinterpret_cast<Answer *>(a.small_buf(1, pp));
      c = Calibration{};
      c.line_rtt_us = ping(ping_line, peer.pong, pp, w);
      measure_cma(c, peer);
    }
    a.post(pp);
    a.post_consumed(pp);
    a.wait_reusable(result, true, w);
    if (leader) {
      measure_copies(c);
      c.origin = "measured now";
      // Kept even when the load spoiled the ping-pong (line_rtt_us 0: the
      // default arena latency), so that every job of the boot agrees;
      // SMD_CALIBRATE=force measures again.
      write_calibration(calibration_cache_path(), calibration_key(), c);
      Message m = to_message(c, false);
      memcpy(a.small_buf(0, result), &m, sizeof m);
      a.post(result);
      SMD_INFO("calibrate", "measured in %.1f ms", (now_ns() - t0) / 1e6);
    } else {
      a.wait_posted_by(0, result, w);
      Message m;
      memcpy(&m, a.small_buf(0, result), sizeof m);
      c = from_message(m);
      a.post(result);
    }
    a.post_consumed(result);
  }

  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (c.measured()) g_known = c;
    if (measure && leader) g_measured_here = true;
  }
  if (c.measured()) adopt_copy_heuristics(c, comm.size());
  std::string text;
  for (const auto &[k, v] : c.entries()) text += format(" %s=%g", k.c_str(), v);
  SMD_INFO("calibrate", "%s:%s (%s)", comm.where().c_str(), text.c_str(), c.origin.c_str());
  return c;
}

}  // namespace smd
