// calibrate_node: the leader's values handed to every member through the
// arena, with the two-rank measurements (pair_probes.h) when there are none.
//
// Rounds (reserved alike by every member): in the first the leader posts
// either the values or "measure"; after "measure", ranks 0 and 1 run the
// pair probes in the buffers of a second round while the others wait for
// the third, where the leader posts what it measured.
#include <algorithm>
#include <cstring>
#include <iterator>
#include <mutex>

#include "core/coll/calibrate/calibration.h"
#include "core/coll/calibrate/pair_probes.h"
#include "core/coll/calibrate/staging_probe.h"
#include "core/coll/algorithms/blocks/stream_copy.h"
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
  double values[16];
  char origin[32];
};
static_assert(sizeof(Message) <= Arena::kSmallBytes);
static_assert(sizeof(Answer) <= Arena::kSmallBytes && sizeof(PingLine) <= Arena::kSmallBytes);

std::mutex g_mu;
int64_t g_stream_min = -1;           // the threshold adopted so far (-1: none)
std::optional<Calibration> g_known;  // what this process last received
bool g_measured_here = false;        // this process measured (SMD_CALIBRATE=force: once)

Message to_message(const Calibration &c, bool measure) {
  Message m{};
  m.measure = measure ? 1 : 0;
  auto e = c.entries();
  for (size_t i = 0; i < e.size() && i < std::size(m.values); ++i) m.values[i] = e[i].second;
  snprintf(m.origin, sizeof m.origin, "%s", c.origin.c_str());
  return m;
}

Calibration from_message(const Message &m) {
  Calibration c;
  auto e = c.entries();
  for (size_t i = 0; i < e.size() && i < std::size(m.values); ++i) c.set(e[i].first, m.values[i]);
  c.origin = std::string(m.origin, strnlen(m.origin, sizeof m.origin));
  return c;
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
  if (c.stage_stream_min_bytes != 0)
    adopt_stage_stream_range(static_cast<int64_t>(c.stage_stream_min_bytes),
                             static_cast<int64_t>(c.stage_stream_max_bytes));
  reduce::set_streaming_working_set(2 * static_cast<size_t>(crossover));
}

void log_values(Comm &comm, const Calibration &c) {
  std::string text;
  for (const auto &[k, v] : c.entries()) text += format(" %s=%g", k.c_str(), v);
  SMD_INFO("calibrate", "%s:%s (%s)", comm.where().c_str(), text.c_str(), c.origin.c_str());
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
    auto &ping_line = *reinterpret_cast<PingLine *>(a.small_buf(0, pp));
    if (a.rank() == 1) {
      answer_probes(ping_line, *reinterpret_cast<Answer *>(a.small_buf(1, pp)), a.buf(1, pp),
                    a.chunk(), pp, w);
    } else if (leader) {
      a.wait_posted_by(1, first, w);  // its answer line is clear
      PairProbe probe(ping_line, *reinterpret_cast<Answer *>(a.small_buf(1, pp)), pp, w);
      c = Calibration{};
      probe.start();
      c.line_rtt_us = probe.line_rtt_us();
      probe.measure_cma(c);
      probe.finish();
    }
    a.post(pp);
    a.post_consumed(pp);
    a.wait_reusable(result, true, w);
    if (leader) {
      measure_copies(c);
      c.origin = "measured now";
      // Kept even when the load spoiled the ping-pong (line_rtt_us 0: the
      // default arena latency), so that every job of the boot agrees;
      // SMD_CALIBRATE=force measures again. With the staging probe still
      // to run, remember_calibration writes the file.
      if (!staging_probe_due(comm, c))
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
  log_values(comm, c);
  return c;
}

void remember_calibration(Comm &comm, const Calibration &c) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_known = c;
  }
  adopt_copy_heuristics(c, comm.size());
  if (comm.arena()->rank() == 0) write_calibration(calibration_cache_path(), calibration_key(), c);
  log_values(comm, c);
}

}  // namespace smd
