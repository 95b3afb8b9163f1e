// Device buffers shared between a node's ranks, and one rank's device
// failure inside a collective, through the public ABI (smdrun -n N):
// every rank exports its cudaMalloc buffer with cudaIpcGetMemHandle, the
// handles travel by smd_allgather, each rank maps its peers' buffers
// (cudaIpcOpenMemHandle), reads them and writes into its successor's, so
// the buffers are shared rather than copied: what the device-resident
// algorithms will build on. Over the host stand-in for CUDA only, the last
// rank then passes a count past its allocation's end to an allreduce:
// every rank must get an error, and none SMD_ERR_TIMEOUT (the stand-in
// refuses such a copy; a GPU need not: it may read what lies beyond).
// A plain program; exit 77 without a device.
#include <dlfcn.h>
#include <smd.h>

#include <cstdlib>

#include <string>
#include <vector>

#include "core/gpu/ipc_peers.h"
#include "core/util/error.h"
#include "rank_checks.h"

using namespace smd::gpu;
using namespace smd::gpu::testing;

namespace {

float value(int rank, size_t i) { return float(rank * 1000 + int(i % 1000)); }

void exchange(const CudaApi &a, smd_comm_t *comm) {
  const size_t n = 4096;
  DeviceBuffer mine(a, n * 4);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = value(g_rank, i);
  mine.upload(0, v.data(), n * 4);
  CudaIpcHandle own{};
  check("cudaIpcGetMemHandle", a.IpcGetMemHandle(&own, mine.data()));
  std::vector<CudaIpcHandle> all(static_cast<size_t>(g_size));
  expect(smd_allgather(&own, all.data(), sizeof own, SMD_UINT8, comm, nullptr) == SMD_SUCCESS,
         "allgather of handles");
  // A process cannot open its own handle (CUDA refuses; so does the stand-in).
  void *self = nullptr;
  const int self_err = a.IpcOpenMemHandle(&self, own, kCudaIpcMemLazyEnablePeerAccess);
  expect(self_err != 0, "opening this process's own handle is refused");
  if (self_err == 0) a.IpcCloseMemHandle(self);
  a.GetLastError();

  std::vector<void *> peer(size_t(g_size), nullptr);
  for (int p = 0; p < g_size; ++p) {
    if (p == g_rank) continue;
    const int err =
        a.IpcOpenMemHandle(&peer[size_t(p)], all[size_t(p)], kCudaIpcMemLazyEnablePeerAccess);
    expect(err == 0, "cudaIpcOpenMemHandle of rank " + std::to_string(p) + ": " +
                         cuda_error_text("cudaIpcOpenMemHandle", err));
    if (err) continue;
    std::vector<float> got(n);
    check("cudaMemcpyAsync",
          a.MemcpyAsync(got.data(), peer[size_t(p)], n * 4, kCudaMemcpyDefault, nullptr));
    check("cudaStreamSynchronize", a.StreamSynchronize(nullptr));
    bool same = true;
    for (size_t i = 0; i < n; ++i) same = same && got[i] == value(p, i);
    expect(same, "rank " + std::to_string(p) + "'s buffer read through its handle");
  }
  // Write a marker at the end of the successor's buffer, through its
  // mapping, once every rank has read the buffers as they were.
  expect(smd_barrier(comm, nullptr) == SMD_SUCCESS, "barrier after the reads");
  const int next = (g_rank + 1) % g_size;
  if (g_size > 1 && peer[size_t(next)]) {
    const float marker = -1.0f - float(g_rank);
    check("cudaMemcpyAsync", a.MemcpyAsync(static_cast<float *>(peer[size_t(next)]) + n - 1,
                                           &marker, 4, kCudaMemcpyDefault, nullptr));
    check("cudaStreamSynchronize", a.StreamSynchronize(nullptr));
  }
  expect(smd_barrier(comm, nullptr) == SMD_SUCCESS, "barrier after the writes");
  if (g_size > 1) {
    const int prev = (g_rank + g_size - 1) % g_size;
    float last = 0;
    mine.download(&last, (n - 1) * 4, 4);
    expect(last == -1.0f - float(prev), "the predecessor's write is in this rank's buffer");
  }
  for (void *p : peer)
    if (p) expect(a.IpcCloseMemHandle(p) == 0, "cudaIpcCloseMemHandle");
  // Nobody frees a buffer a peer still maps.
  expect(smd_barrier(comm, nullptr) == SMD_SUCCESS, "barrier after closing");
}

// smd's own exchange (core/gpu/ipc_peers.h): peers' allocations opened
// once and kept, inner pointers at their offsets, a new allocation opened
// anew, and a buffer that cannot be exported an error on every rank.
void cached_exchange(const CudaApi &a, smd_comm_t *comm) {
  IpcPeers peers(g_rank, g_size);
  auto allgather = [&](const IpcPeers::Record &mine, IpcPeers::Record *all) {
    if (smd_allgather(&mine, all, sizeof mine, SMD_UINT8, comm, nullptr) != SMD_SUCCESS)
      smd::fail(SMD_ERR_INTERNAL, "allgather of IPC records: %s", smd_last_error());
  };
  const size_t n = 1024;
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = value(g_rank, i);
  DeviceBuffer first(a, n * 4), second(a, n * 4);
  first.upload(0, v.data(), n * 4);
  second.upload(0, v.data(), n * 4);
  auto reads = [&](const std::vector<void *> &bufs, size_t from) {
    bool ok = true;
    for (int p = 0; p < g_size; ++p) {
      float got = 0;
      check("cudaMemcpyAsync",
            a.MemcpyAsync(&got, bufs[size_t(p)], 4, kCudaMemcpyDefault, nullptr));
      check("cudaStreamSynchronize", a.StreamSynchronize(nullptr));
      ok = ok && got == value(p, from);
    }
    return ok;
  };
  const uint64_t peers_count = uint64_t(g_size - 1);
  try {
    expect(reads(peers.exchange(first.data(), allgather), 0) && peers.opened() == peers_count,
           "exchange maps each peer's buffer");
    expect(
        reads(peers.exchange(first.data() + 256, allgather), 64) && peers.opened() == peers_count,
        "an inner pointer of the same allocations: no new mapping, the right offset");
    expect(reads(peers.exchange(second.data(), allgather), 0) && peers.opened() == 2 * peers_count,
           "new allocations are mapped anew");
    expect(reads(peers.exchange(first.data(), allgather), 0) && peers.opened() == 2 * peers_count,
           "the first allocations are still mapped");
  } catch (const smd::Error &e) {
    expect(false, std::string("exchange threw: ") + e.what());
  }
  // The last rank passes pinned host memory, which CUDA IPC cannot share.
  void *pinned = nullptr;
  check("cudaMallocHost", a.MallocHost(&pinned, 64));
  smd_result_t code = SMD_SUCCESS;
  try {
    peers.exchange(g_rank == g_size - 1 ? pinned : first.data(), allgather);
  } catch (const smd::Error &e) {
    code = e.code();
  }
  expect(code == SMD_ERR_NOT_SUPPORTED,
         "a buffer one rank cannot export is an error on every rank");
  a.FreeHost(pinned);
  expect(smd_barrier(comm, nullptr) == SMD_SUCCESS, "barrier before the buffers are freed");
}

// The allreduce that reads peers' buffers through CUDA IPC (SMD_GPU_IPC=1,
// read at every call): sums out of place and in place, and a max; over
// the stand-in, the mappings it made are still open afterwards (kept by
// the communicator), which shows that this route ran rather than staging.
void device_route(const CudaApi &a, smd_comm_t *comm) {
  setenv("SMD_GPU_IPC", "1", 1);
  const size_t n = 1001;
  std::vector<float> v(n), sum(n), max(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = value(g_rank, i);
    for (int r = 0; r < g_size; ++r) sum[i] += value(r, i);
    max[i] = value(g_size - 1, i);
  }
  DeviceBuffer in(a, n * 4), out(a, n * 4);
  std::vector<float> got(n);
  in.upload(0, v.data(), n * 4);
  expect(
      smd_allreduce(in.data(), out.data(), n, SMD_FLOAT32, SMD_SUM, comm, nullptr) == SMD_SUCCESS &&
          (out.download(got.data(), 0, n * 4), got == sum),
      "allreduce sum through IPC");
  expect(
      smd_allreduce(in.data(), out.data(), n, SMD_FLOAT32, SMD_MAX, comm, nullptr) == SMD_SUCCESS &&
          (out.download(got.data(), 0, n * 4), got == max),
      "allreduce max through IPC");
  expect(
      smd_allreduce(in.data(), in.data(), n, SMD_FLOAT32, SMD_SUM, comm, nullptr) == SMD_SUCCESS &&
          (in.download(got.data(), 0, n * 4), got == sum),
      "allreduce in place through IPC");
  void *lib = dlopen(cuda_status().library.c_str(), RTLD_NOW | RTLD_NOLOAD);
  auto mappings =
      lib ? reinterpret_cast<int (*)()>(dlsym(lib, "smd_cuda_standin_ipc_mappings")) : nullptr;
  if (mappings) expect(mappings() > 0, "the allreduce mapped the peers' buffers");
  if (lib) dlclose(lib);
  unsetenv("SMD_GPU_IPC");
  expect(smd_barrier(comm, nullptr) == SMD_SUCCESS, "barrier before the buffers are freed");
}

void one_rank_fails(const CudaApi &a, smd_comm_t *world) {
  smd_comm_t *comm = nullptr;  // poisoned by the failure: not the world
  expect(smd_comm_dup(world, &comm) == SMD_SUCCESS, "comm_dup");
  if (!comm) return;
  const size_t n = 100000;
  const bool bad = g_rank == g_size - 1;
  DeviceBuffer buf(a, bad ? 64 : n * 4);
  const smd_result_t rc =
      smd_allreduce(buf.data(), buf.data(), n, SMD_FLOAT32, SMD_SUM, comm, nullptr);
  expect(rc != SMD_SUCCESS,
         std::string(bad ? "the rank with the short buffer" : "its peers") + " get an error");
  expect(rc != SMD_ERR_TIMEOUT, "the error comes before SMD_TIMEOUT");
  // The failed rank keeps its communicator until every rank is out of the
  // call: the peers must learn of the failure from it, not from its exit.
  expect(smd_barrier(world, nullptr) == SMD_SUCCESS, "barrier on the world after the failure");
  smd_comm_destroy(comm);
}

}  // namespace

int main() {
  const CudaApi &a = require_device("gpu-ipc");
  smd_comm_t *comm = init_world(a);
  if (!comm) return 1;
  int local_size = 0;
  smd_comm_local_size(comm, &local_size);
  if (local_size != g_size) {
    printf("SKIP gpu-ipc: the ranks span several nodes; CUDA IPC works within one\n");
    smd_comm_destroy(comm);
    return 77;
  }
  exchange(a, comm);
  cached_exchange(a, comm);
  if (g_size > 1) device_route(a, comm);
  if (g_size > 1 && cuda_status().library.find("standin") != std::string::npos)
    one_rank_fails(a, comm);
  smd_comm_destroy(comm);
  if (g_rank == 0) printf("gpu-ipc: %d rank(s), %s\n", g_size, g_failures ? "FAILED" : "passed");
  return g_failures ? 1 : 0;
}
