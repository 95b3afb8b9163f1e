// Copies whose destination the caller will not read again soon: the large
// outputs of the direct algorithms (user buffers many times the cache).
// Ordinary stores first read each destination line into the cache (a
// read-for-ownership), so a copy to memory costs three transfers per byte;
// non-temporal stores write around the cache and cost two. Below
// SMD_STREAM_MIN_BYTES (unset: derived from the crossover the node's
// calibration measured) the output may still be in cache when the caller reads it, and
// ordinary copies win.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/util/clock.h"
#include "core/util/non_copyable.h"

namespace smd {

// Decides when large allgather rounds stage with streaming stores because
// cache-line transfers between the ranks' CPUs became slow (stream_copy.cc
// explains how). One per communicator (its collective state): ranks of
// another arena may share cores that behave differently. The clock gives
// nanoseconds of any monotonic clock (tests pass a fake one).
class SlowTransferGuard {
 public:
  using Clock = int64_t (*)();
  static constexpr int kWindow = 8;                        // rounds compared at a time
  static constexpr double kSlower = 3.0;                   // staging/copy-out ratio that is slow
  static constexpr int64_t kStreamNs = 200 * 1000 * 1000;  // how long to stream

  explicit SlowTransferGuard(Clock clock = &now_ns) : clock_(clock) {}
  bool streaming() const { return clock_() < stream_until_.load(std::memory_order_relaxed); }
  // One round's ticks spent staging and copying out (any unit, the same
  // for both).
  void observe(uint64_t staging, uint64_t copy_out);

 private:
  Clock clock_;
  std::atomic<uint64_t> staging_{0}, copy_out_{0};
  std::atomic<int> rounds_{0}, slow_windows_{0};
  std::atomic<int64_t> stream_until_{0};
};

// Like memcpy (no overlap), with non-temporal stores where the CPU has
// them. Ends with a store fence, so a release store that follows (posting
// a round) orders after the copied bytes.
void stream_copy(void *dst, const void *src, size_t bytes);

// A copy into this rank's arena staging buffer, read next by peers on
// other cores; `round_bytes` is all this rank stages in the round. An
// ordinary store to a line a peer read before (the slot of four rounds ago)
// must first take the line back from the peer's cache; streaming stores
// hand the lines over through memory instead, and the peer then reads
// memory, not a cache. Which costs less depends on the CPU and the size,
// so rounds stream where the node calibration's staging probe measured
// streaming faster (SMD_STAGE_STREAM_MIN_BYTES / _MAX_BYTES when set, or
// when nothing was measured).
void stage_copy(void *dst, const void *src, size_t bytes, size_t round_bytes);

// Whether stage_copy of a round staging `round_bytes` in all uses
// streaming stores.
bool stage_streams(size_t round_bytes);

// The range of round sizes the node's staging probe measured streaming to
// win (min -1: none; max -1: no upper end), for this whole process unless
// SMD_STAGE_STREAM_MIN_BYTES or SMD_STAGE_STREAM_MAX_BYTES is set.
void adopt_stage_stream_range(int64_t min_bytes, int64_t max_bytes);

// For the staging probe (staging_probe.h): this thread's staging copies
// use streaming stores, or not, whatever the range, while it lives.
class ForcedStaging : NonCopyable {
 public:
  explicit ForcedStaging(bool streaming);
  ~ForcedStaging();

 private:
  int previous_;
};

// stage_copy of bytes [0, len) of src to the same offsets of dst, except
// the hole [hole_off, hole_off + hole_len) (the slice this rank reduces
// from its own input).
void stage_except(void *dst, const void *src, size_t len, size_t hole_off, size_t hole_len);

// stage_copy(stage, src, ...) and copy_out(out, src, ..., op_bytes) in one
// pass over src, a block at a time, so that src comes from memory once (the
// second copy finds the block in the first-level cache). For the own block
// of an allgather and a broadcast root's data. A null `stage` stages
// nothing (the input is read in place by peers): only the copy out.
// With `stream_stage` the staging copy uses non-temporal stores whatever
// the round's size (a large broadcast's root: see broadcast.cc). With a
// `guard` (the communicator's), large rounds watch for slow transfers.
void stage_and_copy_out(void *stage, void *out, const void *src, size_t bytes, size_t round_bytes,
                        size_t op_bytes, bool stream_stage = false,
                        SlowTransferGuard *guard = nullptr);

// Whether an operation whose output is `op_bytes` copies it out with
// non-temporal stores (op_bytes >= SMD_STREAM_MIN_BYTES).
bool streams_output(size_t op_bytes);

// The threshold when SMD_STREAM_MIN_BYTES is not set, from the node's
// measured crossover (node_calibration.cc), for this whole process.
void adopt_stream_min_bytes(int64_t bytes);

// stream_copy when `op_bytes` (the whole operation's output) reaches
// SMD_STREAM_MIN_BYTES, else an ordinary copy (memmove).
void copy_out(void *dst, const void *src, size_t bytes, size_t op_bytes);

}  // namespace smd
