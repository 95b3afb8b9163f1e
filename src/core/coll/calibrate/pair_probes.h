// The node calibration's measurements that need two ranks running at once,
// rank 0 measuring and rank 1 answering over a line of each in the arena's
// small buffers of one round: the cache-line round trip (ping-pong of a
// token), and reads of rank 1's buffer by cross-memory attach
// (process_vm_readv).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/coll/calibrate/calibration.h"

namespace smd {

class Waiter;

// Rank 0's line: the token of the trip.
struct PingLine {
  alignas(64) std::atomic<uint64_t> token;
};

// Rank 1's line: its answer, and (on a line of its own) where rank 0 may
// read its memory by cross-memory attach.
struct Answer {
  alignas(64) std::atomic<uint64_t> pong;
  alignas(64) int64_t pid;
  uint64_t addr, len;
};

// Rank 0's side. `round` makes the tokens unique, so a line left over from
// an earlier use of the buffer never passes for an answer.
class PairProbe {
 public:
  PairProbe(PingLine &out, const Answer &peer, uint64_t round, Waiter &w)
      : out_(out), peer_(peer), round_(round), w_(w) {}
  // Waits for rank 1 (it has published its memory); then each call
  // measures one thing.
  void start();
  // The round trip in us; 0 when no batch ran with both ranks on a CPU at
  // once (what it measured then was the scheduler).
  double line_rtt_us();
  // cma_alpha_us and cma_gbps; left 0 where the kernel refuses.
  void measure_cma(Calibration &c);
  // Releases rank 1.
  void finish();

 private:
  // One trip. False when the answer outlasted spinning.
  bool trip();
  // The fastest of batches of trips, in ns per trip; -1 when no batch
  // spun throughout.
  double best_trip_ns(int batch, int max_batches, int64_t budget_ns);

  PingLine &out_;
  const Answer &peer_;
  uint64_t round_;
  Waiter &w_;
  uint64_t next_ = 1;  // the next trip's number
};

// Rank 1's side: publishes `own` (for cross-memory reads) in `me`, then
// answers rank 0's trips until finish().
void answer_probes(const PingLine &in, Answer &me, uint8_t *own, size_t own_len, uint64_t round,
                   Waiter &w);

}  // namespace smd
