#include "core/coll/algorithms/device_ipc.h"

#include <atomic>
#include <cstdint>
#include <vector>

#include "core/coll/algorithms/device_staging.h"
#include "core/coll/coll_state.h"
#include "core/coll/coll_util.h"
#include "core/coll/select/algo_config.h"
#include "core/gpu/device_ops.h"
#include "core/gpu/ipc_peers.h"
#include "core/gpu/pointer_kind.h"
#include "core/util/dtype.h"
#include "core/util/log.h"
#include "core/util/params.h"

namespace smd {
namespace {

void barrier(Comm &comm) {
  run_collective(comm, internal_call(CollKind::kBarrier, nullptr, nullptr, 0, SMD_UINT8));
}

// What each rank sends the others once per call: the call itself, which
// every rank's must match, whether it is in place (which may differ: it
// only decides the allreduce's variant, the same on every rank since each
// sees all), and the IPC records of the buffers peers read.
struct Announcement {
  uint64_t count;
  int32_t kind, datatype, op, root;
  uint32_t subject;
  int32_t in_place;
  gpu::IpcPeers::Record in, out;
};

bool same_call(const Announcement &x, const Announcement &y) {
  return x.count == y.count && x.kind == y.kind && x.datatype == y.datatype && x.op == y.op &&
         x.root == y.root && x.subject == y.subject;
}

gpu::IpcPeers &peers_of(Comm &comm) {
  CollState &st = coll_state(comm);
  if (!st.ipc_peers) st.ipc_peers = std::make_unique<gpu::IpcPeers>(comm.rank(), comm.size());
  return *st.ipc_peers;
}

// The buffer of this rank that peers read: the root's input in a
// broadcast (the others pass their output, which no one reads: their
// sendbuf may be NULL), else the input.
void *read_buffer(const CollArgs &a, int rank) {
  const void *b = a.kind == CollKind::kBroadcast && rank != a.root ? a.recvbuf : a.sendbuf;
  return const_cast<void *>(b);
}

// One call's view of the node, from every rank's announcement: the ranks'
// buffers mapped here and the kernels that combine them. Every member runs
// the same steps in the same order (the barriers are collectives).
class IpcCall {
 public:
  IpcCall(Comm &comm, const CollArgs &a, std::vector<Announcement> all)
      : comm_(comm),
        a_(a),
        p_(comm.size()),
        me_(comm.rank()),
        es_(datatype_size(a.datatype)),
        all_(std::move(all)) {}

  // Throws SMD_ERR_MISMATCH on every rank when the calls differ: the
  // internal calls that follow look alike on every rank whatever the
  // user's call was, so another collective, or a count (datatype, op,
  // root) differing between ranks, must fail here instead of reading
  // peers' buffers of another shape.
  void check_same_call() const {
    const Announcement &first = all_[0];
    for (int r = 1; r < p_; ++r) {
      const Announcement &s = all_[size_t(r)];
      if (!same_call(s, first))
        fail(SMD_ERR_MISMATCH,
             "%s: the device collective of rank 0 is a %s of count %llu, datatype %d, op %d, "
             "root %d, and rank %d's a %s of count %llu, datatype %d, op %d, root %d%s",
             comm_.where().c_str(), coll_name(CollKind(first.kind)),
             static_cast<unsigned long long>(first.count), first.datatype, first.op, first.root, r,
             coll_name(CollKind(s.kind)), static_cast<unsigned long long>(s.count), s.datatype,
             s.op, s.root,
             s.subject != first.subject ? " (and the calls they stand for differ)" : "");
    }
  }

  // The first rank whose buffer CUDA IPC cannot share (-1: none), and
  // CUDA's error for it.
  int unshareable(int *error) const {
    for (int r = 0; r < p_; ++r) {
      const Announcement &s = all_[size_t(r)];
      const bool two_buffers = a_.kind == CollKind::kAllreduce;
      *error = s.in.error ? s.in.error : two_buffers ? s.out.error : 0;
      if (*error) return r;
    }
    return -1;
  }

  bool any_in_place() const {
    for (const Announcement &s : all_)
      if (s.in_place) return true;
    return false;
  }

  // Every rank's input (or output) as mapped here; only `only`'s when given.
  std::vector<const char *> inputs(int only = -1) { return mapped(&Announcement::in, only); }
  std::vector<const char *> outputs() { return mapped(&Announcement::out, -1); }

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

  Comm &comm_;
  const CollArgs &a_;
  const int p_, me_;
  const size_t es_;

 private:
  std::vector<const char *> mapped(gpu::IpcPeers::Record Announcement::*which, int only) {
    std::vector<gpu::IpcPeers::Record> records;
    for (const Announcement &s : all_) records.push_back(s.*which);
    void *mine = which == &Announcement::in ? read_buffer(a_, me_) : a_.recvbuf;
    std::vector<const char *> out;
    for (void *b : peers_of(comm_).open(mine, records, only))
      out.push_back(static_cast<const char *>(b));
    return out;
  }
  std::vector<Announcement> all_;
};

// Small and out of place on every rank: each rank reduces the whole vector
// from every input into its own output. Otherwise (and always in place,
// where a peer may still read the input this rank would overwrite)
// reduce-scatter + allgather: each rank reduces its share into its output,
// then copies the others' shares from their owners' outputs.
void allreduce(IpcCall &c) {
  const CollArgs &a = c.a_;
  const std::vector<const char *> in = c.inputs();
  const bool one_shot =
      !c.any_in_place() && a.count * c.es_ <= uint64_t(param_int("SMD_GPU_IPC_ONESHOT_BYTES"));
  if (one_shot) return c.reduce_from(a.recvbuf, in, 0, a.count);
  const std::vector<const char *> out = c.outputs();
  const Range mine = split(a.count, c.p_, c.me_);
  // In place, this rank's output share is also an input, which the kernel
  // allows; no peer reads this share of this rank's input.
  c.reduce_from(c.out(mine.off), in, mine.off, mine.len);
  barrier(c.comm_);  // every share reduced
  for (int r = 0; r < c.p_; ++r) {
    const Range theirs = split(a.count, c.p_, r);
    if (r != c.me_) c.copy(c.out(theirs.off), out[size_t(r)] + theirs.off * c.es_, theirs.len);
  }
}

// Block r of the output from rank r's input (in place, this rank's own
// input is its output's block already: copy() skips it).
void allgather(IpcCall &c) {
  const std::vector<const char *> in = c.inputs();
  for (int r = 0; r < c.p_; ++r) c.copy(c.out(size_t(r) * c.a_.count), in[size_t(r)], c.a_.count);
}

// Block `me` of every rank's input, reduced into the output (in place it is
// this rank's own input block, which only this rank reads).
void reduce_scatter(IpcCall &c) {
  c.reduce_from(c.a_.recvbuf, c.inputs(), size_t(c.me_) * c.a_.count, c.a_.count);
}

// Block r of the output from block `me` of rank r's input. Out of place
// only (run() stages it otherwise): in place, a peer could still read a
// block this rank already overwrote.
void alltoall(IpcCall &c) {
  const std::vector<const char *> in = c.inputs();
  const size_t n = c.a_.count, mine = size_t(c.me_) * n * c.es_;
  for (int r = 0; r < c.p_; ++r) c.copy(c.out(size_t(r) * n), in[size_t(r)] + mine, n);
}

// Every rank copies the root's input (the root's own copy is local).
void broadcast(IpcCall &c) {
  const int root = c.a_.root;
  c.copy(c.a_.recvbuf, c.inputs(root)[size_t(root)], c.a_.count);
}

// The root reduces every rank's input into its output; the others only
// keep their input until the closing barrier.
void reduce(IpcCall &c) {
  if (c.me_ == c.a_.root) c.reduce_from(c.a_.recvbuf, c.inputs(), 0, c.a_.count);
}

void run(Comm &comm, const CollArgs &a) {
  const void *mine = a.recvbuf ? a.recvbuf : a.sendbuf;
  gpu::DeviceScope on_device(gpu::classify_pointer(mine).device);
  // Inputs complete before the exchange, which every rank enters only then:
  // on the thread's stream, the legacy stream of a NULL-stream call (which
  // waits for the blocking streams' earlier work), or the stream proxy's
  // own, after it waited for the caller's stream (stream_proxy.cc).
  gpu::device_synchronize();
  gpu::IpcPeers &peers = peers_of(comm);
  Announcement me{};
  me.count = a.count;
  me.kind = int32_t(a.kind);
  me.datatype = int32_t(a.datatype);
  me.op = int32_t(a.op);
  me.root = int32_t(a.root);
  me.subject = a.subject;
  me.in_place = a.sendbuf == a.recvbuf;
  me.in = peers.record_of(read_buffer(a, comm.rank()));
  if (a.kind == CollKind::kAllreduce) me.out = peers.record_of(a.recvbuf);
  std::vector<Announcement> all(size_t(comm.size()));
  run_collective(comm, internal_call(CollKind::kAllgather, &me, all.data(), sizeof me, SMD_UINT8));
  IpcCall c(comm, a, std::move(all));
  c.check_same_call();
  // Every rank saw the same announcements: all stage this call alike, or
  // none (said once per process: a training loop would repeat it).
  int error = 0;
  const int rank = c.unshareable(&error);
  const bool in_place_alltoall = a.kind == CollKind::kAlltoall && c.any_in_place();
  if (rank >= 0 || in_place_alltoall) {
    static std::atomic<bool> said{false};
    if (said.exchange(true)) return run_collective_staged(comm, a);
    if (in_place_alltoall)
      SMD_INFO("coll", "%s: alltoall staged: in place on a rank (CUDA IPC reads peers' inputs)",
               comm.where().c_str());
    else
      SMD_INFO("coll",
               "%s: %s staged: rank %d's buffer cannot be shared through CUDA IPC (%s; only "
               "cudaMalloc's memory can)",
               comm.where().c_str(), coll_name(a.kind), rank,
               gpu::cuda_error_text("cudaIpcGetMemHandle", error).c_str());
    return run_collective_staged(comm, a);
  }
  switch (a.kind) {
    case CollKind::kAllreduce: allreduce(c); break;
    case CollKind::kAllgather: allgather(c); break;
    case CollKind::kReduceScatter: reduce_scatter(c); break;
    case CollKind::kBroadcast: broadcast(c); break;
    case CollKind::kAlltoall: alltoall(c); break;
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
                    a.kind == CollKind::kReduce || a.kind == CollKind::kAlltoall;
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
