#include "core/coll/algorithms/device_staging.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/comm/communicator.h"
#include "core/gpu/cuda_api.h"
#include "core/gpu/device_ops.h"
#include "core/gpu/pointer_kind.h"
#include "core/util/dtype.h"
#include "core/util/error.h"

namespace smd {
namespace {

// Pinned host memory kept per thread (the caller's, or the communicator's
// worker for nonblocking and stream-ordered calls) and grown as calls need:
// cudaMallocHost costs milliseconds, far more than one collective. Blocks
// outgrown are freed only with the thread: cudaFreeHost waits for every
// stream of the device, and a stream-ordered call's caller stream waits for
// the very call that would free it.
class PinnedBlock {
 public:
  ~PinnedBlock() {
    if (!gpu::cuda_api()) return;
    for (void *p : blocks_) gpu::cuda_api()->FreeHost(p);
  }
  uint8_t *get(size_t bytes) {
    if (bytes > size_) {
      const gpu::CudaApi &a = *gpu::cuda_api();
      // Doubling from 1 MiB: the blocks outgrown add up to less than the last.
      const size_t want = std::max({bytes, size_ * 2, size_t(1) << 20});
      void *p = nullptr;
      gpu::cuda_check("cudaMallocHost", a.MallocHost(&p, want));
      blocks_.push_back(p);
      size_ = want;
    }
    return static_cast<uint8_t *>(blocks_.back());
  }

 private:
  std::vector<void *> blocks_;
  size_t size_ = 0;
};

}  // namespace

void stage_copy(void *dst, const void *src, size_t bytes) {
  if (!bytes) return;
  const gpu::CudaApi &a = *gpu::cuda_api();
  gpu::cuda_check("cudaMemcpyAsync",
                  a.MemcpyAsync(dst, src, bytes, gpu::kCudaMemcpyDefault, gpu::current_stream()));
}

void stage_sync() {
  gpu::cuda_check("cudaStreamSynchronize",
                  gpu::cuda_api()->StreamSynchronize(gpu::current_stream()));
}

uint8_t *pinned_staging(size_t bytes, int slot) {
  thread_local PinnedBlock pinned[2];
  return pinned[slot].get(std::max<size_t>(1, bytes));
}

StagedShape staged_shape(const CollArgs &a, int rank, int size) {
  const size_t es = datatype_size(a.datatype);
  const size_t one = a.count * es;
  StagedShape s;
  switch (a.kind) {
    case CollKind::kAllreduce: s.send_bytes = s.recv_bytes = one; break;
    case CollKind::kAllgather: s.send_bytes = one, s.recv_bytes = one * size; break;
    case CollKind::kReduceScatter: s.send_bytes = one * size, s.recv_bytes = one; break;
    case CollKind::kAlltoall: s.send_bytes = s.recv_bytes = one * size; break;
    case CollKind::kBroadcast: s.send_bytes = rank == a.root ? one : 0, s.recv_bytes = one; break;
    case CollKind::kReduce: s.send_bytes = one, s.recv_bytes = a.recvbuf ? one : 0; break;
    case CollKind::kAllgatherv:
      // The whole extent comes in too: the gaps between blocks stay as they were.
      s.send_bytes = a.blocks->counts[size_t(rank)] * es;
      s.recv_bytes = a.blocks->extent * es;
      s.recv_in = true;
      break;
    case CollKind::kReduceScatterv:
      s.send_bytes = a.blocks->extent * es;
      s.recv_bytes = a.blocks->counts[size_t(rank)] * es;
      break;
    case CollKind::kAlltoallv:
      // Both whole extents; the output's comes in too, for its gaps.
      s.send_bytes = a.send_blocks->extent * es;
      s.recv_bytes = a.blocks->extent * es;
      s.recv_in = true;
      break;
    default: break;
  }
  if (!a.sendbuf) s.send_bytes = 0;
  if (!a.recvbuf) s.recv_bytes = 0;
  if (s.send_bytes && s.recv_bytes) {
    const auto send = reinterpret_cast<uintptr_t>(a.sendbuf);
    const auto recv = reinterpret_cast<uintptr_t>(a.recvbuf);
    if (send < recv + s.recv_bytes && recv < send + s.send_bytes) {
      const uintptr_t lo = std::min(send, recv);
      s.overlap = true;
      s.send_at = send - lo;
      s.recv_at = recv - lo;
      s.block = std::max(send + s.send_bytes, recv + s.recv_bytes) - lo;
    }
  }
  return s;
}

namespace {

void stage(Comm &comm, const CollArgs &a) {
  const StagedShape s = staged_shape(a, comm.rank(), comm.size());
  // The buffers' GPU is current while staging (a nonblocking call runs on
  // the communicator's worker thread, whose current device is CUDA's 0).
  gpu::DeviceScope on_device(gpu::classify_pointer(s.recv_bytes ? a.recvbuf : a.sendbuf).device);
  if (stage_pipelined(comm, a, s)) return;
  const size_t send_room = s.overlap ? s.block : (s.send_bytes + 63) / 64 * 64;
  uint8_t *host = pinned_staging(s.overlap ? s.block : send_room + s.recv_bytes);
  uint8_t *hsend = s.overlap ? host + s.send_at : host;
  uint8_t *hrecv = s.overlap ? host + s.recv_at : host + send_room;

  // On the thread's stream: for a NULL-stream call the legacy default
  // stream, which waits for earlier work on every blocking stream of the
  // device, so the inputs are complete once it has run; for a
  // stream-ordered call the proxy's own stream, after the proxy waited for
  // the caller's stream (stream_proxy.cc).
  if (s.overlap) {
    // The whole block comes in: parts of the output a collective leaves
    // alone (an in-place allgather's own block) must survive the copy out.
    stage_copy(host, static_cast<const uint8_t *>(a.sendbuf) - s.send_at, s.block);
  } else {
    stage_copy(hsend, a.sendbuf, s.send_bytes);
    if (s.recv_in) stage_copy(hrecv, a.recvbuf, s.recv_bytes);
  }
  stage_sync();

  CollArgs h = a;
  h.memory = MemoryKind::kHost;
  h.sendbuf = s.send_bytes ? hsend : nullptr;
  h.recvbuf = s.recv_bytes ? hrecv : nullptr;
  run_collective(comm, h);

  stage_copy(a.recvbuf, hrecv, s.recv_bytes);
  stage_sync();
}

}  // namespace

void run_collective_staged(Comm &comm, const CollArgs &a) {
  // Refusals every rank meets alike leave the communicator usable.
  if (!gpu::cuda_api())
    fail(SMD_ERR_NOT_SUPPORTED, "device memory needs CUDA: %s", gpu::cuda_status().reason.c_str());
  try {
    stage(comm, a);
  } catch (const Error &e) {
    rethrow_settled(comm, e);
  }
}

void rethrow_settled(Comm &comm, const Error &e) {
  // A copy that failed (freed memory, a count past the allocation's end)
  // leaves the peers inside the collective or waiting for this rank's
  // data: they learn of it as of any failure half-way, rather than at
  // SMD_TIMEOUT (the host algorithms' own failures are settled already:
  // settle_failure then gives `e` back).
  Error cause = comm.settle_failure(e);
  if (cause.message() == e.message()) throw;
  throw cause;
}

}  // namespace smd
