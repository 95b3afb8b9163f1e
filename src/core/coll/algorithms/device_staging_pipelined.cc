// The staged route in chunks, for collectives whose output element j
// depends only on input element j (allreduce, broadcast, reduce): the copy
// of chunk i+1 into pinned memory and of chunk i-1 back to the device run
// on the stream while the host collective of chunk i runs, so the copies
// overlap the network and the reductions instead of adding to them.
#include <algorithm>
#include <cstdint>

#include "core/coll/algorithms/device_staging.h"
#include "core/comm/communicator.h"
#include "core/gpu/cuda_api.h"
#include "core/gpu/device_ops.h"
#include "core/util/dtype.h"
#include "core/util/error.h"
#include "core/util/params.h"

namespace smd {
namespace {

bool elementwise(CollKind k) {
  return k == CollKind::kAllreduce || k == CollKind::kBroadcast || k == CollKind::kReduce;
}

// Two events, recorded in turn after each chunk's copy in.
class Events {
 public:
  explicit Events(const gpu::CudaApi &a) : a_(a) {
    for (auto &e : e_)
      gpu::cuda_check("cudaEventCreateWithFlags",
                      a.EventCreateWithFlags(&e, gpu::kCudaEventDisableTiming));
  }
  ~Events() {
    for (auto e : e_)
      if (e) a_.EventDestroy(e);
  }
  Events(const Events &) = delete;
  Events &operator=(const Events &) = delete;
  gpu::cuda_event_t operator[](size_t i) const { return e_[i % 2]; }

 private:
  const gpu::CudaApi &a_;
  gpu::cuda_event_t e_[2] = {nullptr, nullptr};
};

}  // namespace

bool stage_pipelined(Comm &comm, const CollArgs &a, const StagedShape &s) {
  const int64_t chunk_setting = param_int("SMD_GPU_STAGE_CHUNK_BYTES");
  if (chunk_setting <= 0 || !elementwise(a.kind)) return false;
  const size_t es = datatype_size(a.datatype);
  const size_t bytes = a.count * es;
  // Whole elements per chunk; every rank computes the same chunks from the
  // same count and setting (agreed at init), so the calls line up.
  const size_t chunk = std::max<size_t>(1, size_t(chunk_setting) / es) * es;
  if (bytes < 2 * chunk) return false;
  // In place is the same range in and out; any other overlap stages whole.
  if (s.overlap && (s.send_at != s.recv_at || s.block != bytes)) return false;

  const gpu::CudaApi &api = *gpu::cuda_api();
  void *stream = gpu::current_stream();
  uint8_t *host = pinned_staging(s.overlap ? bytes : (s.send_bytes ? bytes : 0) + bytes);
  uint8_t *hsend = host;
  uint8_t *hrecv = s.overlap ? host : host + (s.send_bytes ? bytes : 0);
  const size_t chunks = (bytes + chunk - 1) / chunk;
  auto length = [&](size_t i) { return std::min(chunk, bytes - i * chunk); };
  Events copied_in(api);
  auto copy_in = [&](size_t i) {
    if (s.send_bytes)
      gpu::cuda_check(
          "cudaMemcpyAsync",
          api.MemcpyAsync(hsend + i * chunk, static_cast<const uint8_t *>(a.sendbuf) + i * chunk,
                          length(i), gpu::kCudaMemcpyDefault, stream));
    gpu::cuda_check("cudaEventRecord", api.EventRecord(copied_in[i], stream));
  };
  copy_in(0);
  for (size_t i = 0; i < chunks; ++i) {
    if (i + 1 < chunks) copy_in(i + 1);
    gpu::cuda_check("cudaEventSynchronize", api.EventSynchronize(copied_in[i]));
    CollArgs h = a;
    h.memory = MemoryKind::kHost;
    h.count = length(i) / es;
    h.sendbuf = s.send_bytes ? hsend + i * chunk : nullptr;
    h.recvbuf = s.recv_bytes ? hrecv + i * chunk : nullptr;
    run_collective(comm, h);
    if (s.recv_bytes)
      gpu::cuda_check(
          "cudaMemcpyAsync",
          api.MemcpyAsync(static_cast<uint8_t *>(a.recvbuf) + i * chunk, hrecv + i * chunk,
                          length(i), gpu::kCudaMemcpyDefault, stream));
  }
  gpu::cuda_check("cudaStreamSynchronize", api.StreamSynchronize(stream));
  return true;
}

}  // namespace smd
