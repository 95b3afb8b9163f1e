#include "core/coll/algorithms/device_ipc.h"

#include <cstdint>
#include <vector>

#include "core/coll/coll_state.h"
#include "core/coll/algorithms/device_staging.h"
#include "core/gpu/device_ops.h"
#include "core/gpu/ipc_peers.h"
#include "core/gpu/pointer_kind.h"
#include "core/util/dtype.h"
#include "core/util/params.h"

namespace smd {
namespace {

void barrier(Comm &comm) {
  run_collective(comm, internal_call(CollKind::kBarrier, nullptr, nullptr, 0, SMD_UINT8));
}

// The internal calls below look alike on every rank whatever the user's
// call was: the ranks compare the call itself first, so that counts (or a
// datatype, an op) differing between ranks fail on every rank instead of
// reducing shares of different vectors.
void agree_on_shape(Comm &comm, const CollArgs &a) {
  struct Shape {
    uint64_t count;
    int32_t datatype, op;
  } mine{a.count, int32_t(a.datatype), int32_t(a.op)};
  std::vector<Shape> all(size_t(comm.size()));
  run_collective(comm,
                 internal_call(CollKind::kAllgather, &mine, all.data(), sizeof mine, SMD_UINT8));
  for (int r = 0; r < comm.size(); ++r) {
    const Shape &s = all[size_t(r)];
    if (s.count != mine.count || s.datatype != mine.datatype || s.op != mine.op)
      fail(SMD_ERR_MISMATCH,
           "%s: the device allreduce of rank 0 has count %llu, datatype %d, op %d, and rank %d's "
           "count %llu, datatype %d, op %d",
           comm.where().c_str(), static_cast<unsigned long long>(all[0].count), all[0].datatype,
           all[0].op, r, static_cast<unsigned long long>(s.count), s.datatype, s.op);
  }
}

gpu::IpcPeers &peers_of(Comm &comm) {
  CollState &st = coll_state(comm);
  if (!st.ipc_peers) st.ipc_peers = std::make_unique<gpu::IpcPeers>(comm.rank(), comm.size());
  return *st.ipc_peers;
}

void allreduce(Comm &comm, const CollArgs &a) {
  const int p = comm.size(), me = comm.rank();
  const size_t es = datatype_size(a.datatype);
  gpu::DeviceScope on_device(gpu::classify_pointer(a.recvbuf).device);
  // Inputs complete before the exchange, which every rank enters only then:
  // on the thread's stream, the legacy stream of a NULL-stream call (which
  // waits for the blocking streams' earlier work), or the stream proxy's
  // own, after it waited for the caller's stream (stream_proxy.cc).
  gpu::device_synchronize();
  agree_on_shape(comm, a);
  gpu::IpcPeers &peers = peers_of(comm);
  auto allgather = [&](const gpu::IpcPeers::Record &mine, gpu::IpcPeers::Record *all) {
    run_collective(comm, internal_call(CollKind::kAllgather, &mine, all, sizeof mine, SMD_UINT8));
  };
  const std::vector<void *> in = peers.exchange(const_cast<void *>(a.sendbuf), allgather);
  const std::vector<void *> out = peers.exchange(a.recvbuf, allgather);
  auto share = [&](int r, size_t *first) {
    const size_t lo = a.count * size_t(r) / size_t(p), hi = a.count * size_t(r + 1) / size_t(p);
    *first = lo * es;
    return hi - lo;
  };
  // This rank's share, from every rank's input (its own among them: in
  // place, the output share is also an input, which the kernel allows).
  size_t at = 0;
  const size_t mine = share(me, &at);
  if (mine) {
    std::vector<const void *> srcs;
    for (int r = 0; r < p; ++r) srcs.push_back(static_cast<const char *>(in[size_t(r)]) + at);
    const bool avg = a.op == SMD_AVG;
    gpu::device_reduce(static_cast<char *>(a.recvbuf) + at, srcs.data(), p, mine, a.datatype,
                       avg ? SMD_SUM : a.op, avg ? p : 1);
  }
  barrier(comm);  // every share reduced
  for (int r = 0; r < p; ++r) {
    const size_t n = share(r, &at);
    if (r != me && n)
      gpu::device_copy(static_cast<char *>(a.recvbuf) + at,
                       static_cast<char *>(out[size_t(r)]) + at, n * es);
  }
  barrier(comm);  // no rank changes its buffers while a peer still reads them
}

}  // namespace

bool device_ipc_applies(Comm &comm, const CollArgs &a) {
  return a.kind == CollKind::kAllreduce && a.memory == MemoryKind::kDevice && comm.size() > 1 &&
         param_bool("SMD_GPU_IPC") && coll_state(comm).shape.nodes == 1;
}

void run_allreduce_ipc(Comm &comm, const CollArgs &a) {
  try {
    allreduce(comm, a);
  } catch (const Error &e) {
    rethrow_settled(comm, e);
  }
}

}  // namespace smd
