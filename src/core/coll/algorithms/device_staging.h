// The first route for collectives on device memory: copy the inputs into
// pinned host memory, run the host algorithms on it, copy the results back,
// all ordered on the legacy default stream (docs/GPU.md). Correct for every
// collective and world shape, at the price of two copies over PCIe and a
// host-synchronous call; the direct device paths (CUDA IPC inside a node,
// device-memory plugins) replace it where they apply.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/coll/collective.h"
#include "core/util/error.h"

namespace smd {

// Where a call's buffers lie relative to each other, in bytes: what must be
// staged in and out, and whether the output overlaps the input (in place:
// sendbuf == recvbuf, an allgather's input inside its output, a
// reduce_scatter's output inside its input).
struct StagedShape {
  size_t send_bytes = 0;  // 0: no input on this rank (broadcast non-root, barrier)
  size_t recv_bytes = 0;  // 0: no output on this rank (reduce non-root, barrier)
  bool recv_in = false;   // the output region is copied in first (allgatherv's gaps)
  // With overlap, one host block holds both: the input at send_at and the
  // output at recv_at inside a block of `block` bytes.
  bool overlap = false;
  size_t send_at = 0, recv_at = 0, block = 0;
};

// This thread's pinned host block, at least `bytes` long (kept and grown:
// device_staging.cc says why); valid until the thread's next call of the
// same slot. Slot 0 is the staged route's; a stream-ordered group's
// point-to-point payloads, in flight while its collectives stage, use 1.
uint8_t *pinned_staging(size_t bytes, int slot = 0);

// A copy on the thread's stream (gpu::StreamScope), and a wait for it.
void stage_copy(void *dst, const void *src, size_t bytes);
void stage_sync();

StagedShape staged_shape(const CollArgs &a, int rank, int size);

// The pipelined form of the staged route for elementwise collectives
// (allreduce, broadcast, reduce) larger than two chunks
// (SMD_GPU_STAGE_CHUNK_BYTES): chunk i's host collective runs while chunk
// i+1 is copied in and chunk i-1 copied out, on the thread's stream.
// Returns false, having done nothing, where it does not apply.
// device_staging_pipelined.cc.
bool stage_pipelined(Comm &comm, const CollArgs &a, const StagedShape &s);

// Runs `a` (device buffers) through pinned host staging; returns when the
// results are in the device buffers. Throws like run_collective, and
// SMD_ERR_SYSTEM naming the CUDA call that failed.
void run_collective_staged(Comm &comm, const CollArgs &a);

// Inside the handler of a device call that failed on this rank with `e`:
// settles the failure (Comm::settle_failure: poisons the communicator and
// announces it, so the peers fail at once) and throws the one that stands.
[[noreturn]] void rethrow_settled(Comm &comm, const Error &e);

}  // namespace smd
