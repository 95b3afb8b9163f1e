#include "core/coll/algorithms/device_ipc.h"

#include <cstdint>
#include <vector>

#include "core/coll/algorithms/device_staging.h"
#include "core/coll/coll_state.h"
#include "core/coll/select/algo_config.h"
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

// What every rank's call must share, and whether it is in place (which may
// differ: it only decides the allreduce's variant, the same on every rank
// since each sees all ranks' shapes).
struct Shape {
  uint64_t count;
  int32_t kind, datatype, op, root;
  uint32_t subject;
  int32_t in_place;
};

bool same_call(const Shape &x, const Shape &y) {
  return x.count == y.count && x.kind == y.kind && x.datatype == y.datatype && x.op == y.op &&
         x.root == y.root && x.subject == y.subject;
}

// The internal calls below look alike on every rank whatever the user's
// call was: the ranks compare the call itself first, so that another
// collective, or a count (datatype, op, root) differing between ranks, fails
// on every rank instead of reading peers' buffers of another shape. Returns
// whether any rank is in place.
bool agree_on_shape(Comm &comm, const CollArgs &a) {
  Shape mine{};
  mine.count = a.count;
  mine.kind = int32_t(a.kind);
  mine.datatype = int32_t(a.datatype);
  mine.op = int32_t(a.op);
  mine.root = int32_t(a.root);
  mine.subject = a.subject;
  mine.in_place = a.sendbuf == a.recvbuf;
  std::vector<Shape> all(size_t(comm.size()));
  run_collective(comm,
                 internal_call(CollKind::kAllgather, &mine, all.data(), sizeof mine, SMD_UINT8));
  bool any_in_place = false;
  for (int r = 0; r < comm.size(); ++r) {
    const Shape &s = all[size_t(r)], &first = all[0];
    any_in_place = any_in_place || s.in_place;
    if (!same_call(s, first))
      fail(SMD_ERR_MISMATCH,
           "%s: the device collective of rank 0 is a %s of count %llu, datatype %d, op %d, "
           "root %d, and rank %d's a %s of count %llu, datatype %d, op %d, root %d%s",
           comm.where().c_str(), coll_name(CollKind(first.kind)),
           static_cast<unsigned long long>(first.count), first.datatype, first.op, first.root, r,
           coll_name(CollKind(s.kind)), static_cast<unsigned long long>(s.count), s.datatype, s.op,
           s.root, s.subject != first.subject ? " (and the calls they stand for differ)" : "");
  }
  return any_in_place;
}

gpu::IpcPeers &peers_of(Comm &comm) {
  CollState &st = coll_state(comm);
  if (!st.ipc_peers) st.ipc_peers = std::make_unique<gpu::IpcPeers>(comm.rank(), comm.size());
  return *st.ipc_peers;
}

// One call's view of the node: every rank's buffers mapped here, and the
// kernels that combine them. Every member runs the same steps in the same
// order (the exchanges and barriers are collectives).
class IpcCall {
 public:
  IpcCall(Comm &comm, const CollArgs &a)
      : comm_(comm), a_(a), p_(comm.size()), me_(comm.rank()), es_(datatype_size(a.datatype)) {}

  // Every rank's `buf` as mapped in this process (this rank's own for it).
  std::vector<const char *> exchange(const void *buf) {
    auto allgather = [&](const gpu::IpcPeers::Record &mine, gpu::IpcPeers::Record *all) {
      run_collective(comm_,
                     internal_call(CollKind::kAllgather, &mine, all, sizeof mine, SMD_UINT8));
    };
    std::vector<const char *> out;
    for (void *b : peers_of(comm_).exchange(const_cast<void *>(buf), allgather))
      out.push_back(static_cast<const char *>(b));
    return out;
  }

  // dst[0, n) = op over every rank of src_r[at, at + n), in elements.
  void reduce_from(void *dst, const std::vector<const char *> &src, size_t at, size_t n) {
    if (!n) return;
    std::vector<const void *> srcs;
    for (const char *s : src) srcs.push_back(s + at * es_);
    const bool avg = a_.op == SMD_AVG;
    gpu::device_reduce(dst, srcs.data(), p_, n, a_.datatype, avg ? SMD_SUM : a_.op, avg ? p_ : 1);
  }

  // Queued on the stream, which run() synchronizes once after the last.
  void copy(void *dst, const void *src, size_t n) { gpu::device_copy_queued(dst, src, n * es_); }

  char *out(size_t at) const { return static_cast<char *>(a_.recvbuf) + at * es_; }
  // Rank r's share of an n-element vector split p ways: [*first, + return).
  size_t share(int r, size_t n, size_t *first) const {
    *first = n * size_t(r) / size_t(p_);
    return n * size_t(r + 1) / size_t(p_) - *first;
  }

  Comm &comm_;
  const CollArgs &a_;
  const int p_, me_;
  const size_t es_;
};

// Small and out of place on every rank: each rank reduces the whole vector
// from every input into its own output, one barrier in all. Otherwise (and
// always in place, where a peer may still read the input this rank would
// overwrite) reduce-scatter + allgather: each rank reduces its share into
// its output, then copies the others' shares from their owners' outputs.
void allreduce(IpcCall &c, bool any_in_place) {
  const CollArgs &a = c.a_;
  const std::vector<const char *> in = c.exchange(a.sendbuf);
  const bool one_shot =
      !any_in_place && a.count * c.es_ <= uint64_t(param_int("SMD_GPU_IPC_ONESHOT_BYTES"));
  if (one_shot) {
    c.reduce_from(a.recvbuf, in, 0, a.count);
    return;
  }
  const std::vector<const char *> out = c.exchange(a.recvbuf);
  size_t at = 0;
  const size_t mine = c.share(c.me_, a.count, &at);
  // In place, this rank's output share is also an input, which the kernel
  // allows; no peer reads this share of this rank's input.
  c.reduce_from(c.out(at), in, at, mine);
  barrier(c.comm_);  // every share reduced
  for (int r = 0; r < c.p_; ++r) {
    const size_t n = c.share(r, a.count, &at);
    if (r != c.me_) c.copy(c.out(at), out[size_t(r)] + at * c.es_, n);
  }
}

// Block r of the output from rank r's input (in place, this rank's own
// input is its output's block already: copy() skips it).
void allgather(IpcCall &c) {
  const std::vector<const char *> in = c.exchange(c.a_.sendbuf);
  for (int r = 0; r < c.p_; ++r) c.copy(c.out(size_t(r) * c.a_.count), in[size_t(r)], c.a_.count);
}

// Block `me` of every rank's input, reduced into the output (in place it is
// this rank's own input block, which only this rank reads).
void reduce_scatter(IpcCall &c) {
  const std::vector<const char *> in = c.exchange(c.a_.sendbuf);
  c.reduce_from(c.a_.recvbuf, in, size_t(c.me_) * c.a_.count, c.a_.count);
}

// Every rank copies the root's input; the root passes its input, the others
// their output, which no peer reads (their sendbuf may be NULL).
void broadcast(IpcCall &c) {
  const CollArgs &a = c.a_;
  const std::vector<const char *> src = c.exchange(c.me_ == a.root ? a.sendbuf : a.recvbuf);
  c.copy(a.recvbuf, src[size_t(a.root)], a.count);
}

// The root reduces every rank's input into its output.
void reduce(IpcCall &c) {
  const std::vector<const char *> in = c.exchange(c.a_.sendbuf);
  if (c.me_ == c.a_.root) c.reduce_from(c.a_.recvbuf, in, 0, c.a_.count);
}

void run(Comm &comm, const CollArgs &a) {
  const void *mine = a.recvbuf ? a.recvbuf : a.sendbuf;
  gpu::DeviceScope on_device(gpu::classify_pointer(mine).device);
  // Inputs complete before the exchange, which every rank enters only then:
  // on the thread's stream, the legacy stream of a NULL-stream call (which
  // waits for the blocking streams' earlier work), or the stream proxy's
  // own, after it waited for the caller's stream (stream_proxy.cc).
  gpu::device_synchronize();
  const bool any_in_place = agree_on_shape(comm, a);
  IpcCall c(comm, a);
  switch (a.kind) {
    case CollKind::kAllreduce: allreduce(c, any_in_place); break;
    case CollKind::kAllgather: allgather(c); break;
    case CollKind::kReduceScatter: reduce_scatter(c); break;
    case CollKind::kBroadcast: broadcast(c); break;
    default: reduce(c); break;
  }
  // Results complete, and no rank changes its buffers while a peer still
  // reads them.
  gpu::device_synchronize();
  barrier(comm);
}

}  // namespace

bool device_ipc_applies(Comm &comm, const CollArgs &a) {
  const bool kind = a.kind == CollKind::kAllreduce || a.kind == CollKind::kAllgather ||
                    a.kind == CollKind::kReduceScatter || a.kind == CollKind::kBroadcast ||
                    a.kind == CollKind::kReduce;
  return kind && a.memory == MemoryKind::kDevice && comm.size() > 1 && param_bool("SMD_GPU_IPC") &&
         coll_state(comm).shape.nodes == 1;
}

void run_collective_ipc(Comm &comm, const CollArgs &a) {
  try {
    run(comm, a);
  } catch (const Error &e) {
    rethrow_settled(comm, e);
  }
}

}  // namespace smd
