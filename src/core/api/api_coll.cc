// Collective entry points: validate, then run inline (blocking forms) or
// queue on the communicator's executor (i-forms).
#include <smd.h>

#include "core/api/group_calls.h"
#include "core/api/guard.h"
#include "core/api/handles.h"
#include "core/api/validate.h"
#include "core/coll/select/algo_config.h"
#include "core/coll/collective.h"
#include "core/coll/flight_scope.h"
#include "core/coll/stream_proxy.h"

using namespace smd;

namespace {

// The request of a queued call, around the task that completes it.
void make_request(const CommUse &c, const CollArgs &a, size_t elems, std::shared_ptr<Task> task,
                  smd_request_t **request) {
  auto *r = new smd_request();
  r->comm = c.shared();
  r->count = elems;
  r->op = coll_name(a.kind);
  r->task = std::move(task);
  request_registry().add(r);
  *request = r;
}

bool proxied_kind(CollKind kind) {
  switch (kind) {
    case CollKind::kAllreduce:
    case CollKind::kAllgather:
    case CollKind::kReduceScatter:
    case CollKind::kBroadcast:
    case CollKind::kReduce:
    case CollKind::kAlltoall:
    case CollKind::kAllgatherv:
    case CollKind::kReduceScatterv:
    case CollKind::kAlltoallv: return true;
    default: return false;
  }
}

void require_proxied(CollKind kind) {
  if (!proxied_kind(kind))
    fail(SMD_ERR_NOT_SUPPORTED,
         "%s on device memory with a stream is not supported yet (stream-ordered: allreduce, "
         "allgather, reduce_scatter, broadcast, reduce, alltoall and the v-collectives): pass "
         "NULL or host buffers",
         coll_name(kind));
}

// A call on device memory with a stream, or a nonblocking one with NULL:
// queued for the communicator's stream proxy (stream_proxy.h); returns at
// once.
std::shared_ptr<Task> launch_on_stream(const CommUse &c, const CollArgs &a, size_t elems,
                                       smd_stream_t stream, smd_request_t **request) {
  require_proxied(a.kind);
  c->executor().leave_sole_use();  // before the flight entry (flight_recorder.cc)
  if (c->flight().on()) c->flight().queued(flight_call(a));
  std::shared_ptr<Task> task = run_on_stream(*c, a, stream);
  if (request) make_request(c, a, elems, task, request);
  return task;
}

void launch(const CommUse &c, CollArgs a, size_t elems, smd_request_t **request,
            smd_stream_t stream) {
  c->check_usable();
  a.memory = collective_memory(a, c->rank());
  if (stream_ordered(stream)) {
    const bool device = a.memory == MemoryKind::kDevice;
    if (device) require_proxied(a.kind);
    // Host memory: the host work after the stream's earlier work.
    if (!device) wait_for_stream(stream);
    // In a group: the whole group runs on the proxy (group_calls.h).
    if (group_open()) return group_queue_collective(c.shared(), a, elems, request, stream);
    if (device) {
      launch_on_stream(c, a, elems, stream, request);
      return;
    }
  }
  if (group_open()) return group_queue_collective(c.shared(), a, elems, request);
  if (!request && a.memory == MemoryKind::kDevice && proxied_kind(a.kind) &&
      c->has_stream_proxy()) {
    // After stream-ordered calls on this communicator: through the proxy
    // as a nonblocking NULL-stream call is, then waited for. Staged on the
    // legacy default stream instead (inline, or by the worker), its copies
    // would wait for a blocking stream held for a stream call queued
    // behind this one (another thread's): a deadlock.
    std::shared_ptr<Task> task = launch_on_stream(c, a, elems, nullptr, nullptr);
    task->wait_until(Deadline::never());
    if (task->result() != SMD_SUCCESS) throw Error(task->result(), task->error());
    return;
  }
  if (!request) {
    // The communicator's only thread runs it inline (handles.h). A NULL
    // stream call after stream-ordered ones waits here for the proxy's
    // queue (the executor is FIFO), so the order holds.
    if (c.fast()) return run_collective(*c, a);
    c->executor().run_blocking([&] { run_collective(*c, a); });
    return;
  }
  if (a.memory == MemoryKind::kDevice && proxied_kind(a.kind)) {
    launch_on_stream(c, a, elems, nullptr, request);
    return;
  }
  Comm *raw = &*c;                 // the executor lives inside the communicator
  c->executor().leave_sole_use();  // before the flight entry (flight_recorder.cc)
  if (c->flight().on()) c->flight().queued(flight_call(a));
  make_request(c, a, elems, c->executor().submit([raw, a] { run_collective(*raw, a); }), request);
}

void out_request(smd_request_t **request) {
  if (!request) fail(SMD_ERR_INVALID_ARGUMENT, "request is NULL");
  *request = nullptr;
}

void do_allreduce(const void *sendbuf, void *recvbuf, size_t count, smd_datatype_t dt, smd_op_t op,
                  smd_comm_t *comm, smd_stream_t stream, smd_request_t **req) {
  CommUse c(comm, req == nullptr);
  size_t es = check_datatype(dt);
  check_op(op);
  size_t bytes = checked_bytes(count, es, 1, "count");
  check_buffer(sendbuf, bytes, "sendbuf");
  check_buffer(recvbuf, bytes, "recvbuf");
  check_overlap(sendbuf, bytes, recvbuf, bytes, 0);
  CollArgs a{CollKind::kAllreduce, sendbuf, recvbuf, count, dt, op, 0};
  launch(c, a, count, req, stream);
}

// allgather's and reduce_scatter's checked arguments: size() blocks of
// `count` lie in recvbuf (allgather) or sendbuf (reduce_scatter); the other
// buffer holds this rank's block alone, or is that block (in place).
CollArgs block_args(CollKind kind, const Comm &c, const void *sendbuf, void *recvbuf, size_t count,
                    smd_datatype_t dt, smd_op_t op) {
  size_t es = check_datatype(dt);
  bool blocks_in_send = kind == CollKind::kReduceScatter;
  if (blocks_in_send) check_op(op);
  size_t own = checked_bytes(count, es, 1, blocks_in_send ? "recvcount" : "sendcount");
  size_t total =
      checked_bytes(count, es, c.size(), blocks_in_send ? "recvcount x size" : "sendcount x size");
  check_buffer(sendbuf, blocks_in_send ? total : own, "sendbuf");
  check_buffer(recvbuf, blocks_in_send ? own : total, "recvbuf");
  if (blocks_in_send) check_overlap(recvbuf, own, sendbuf, total, own * c.rank());
  else check_overlap(sendbuf, own, recvbuf, total, own * c.rank());
  return CollArgs{kind, sendbuf, recvbuf, count, dt, op, 0};
}

void do_allgather(const void *sendbuf, void *recvbuf, size_t count, smd_datatype_t dt,
                  smd_comm_t *comm, smd_stream_t stream, smd_request_t **req) {
  CommUse c(comm, req == nullptr);
  CollArgs a = block_args(CollKind::kAllgather, *c, sendbuf, recvbuf, count, dt, SMD_SUM);
  launch(c, a, count * c->size(), req, stream);
}

void do_reduce_scatter(const void *sendbuf, void *recvbuf, size_t count, smd_datatype_t dt,
                       smd_op_t op, smd_comm_t *comm, smd_stream_t stream, smd_request_t **req) {
  CommUse c(comm, req == nullptr);
  CollArgs a = block_args(CollKind::kReduceScatter, *c, sendbuf, recvbuf, count, dt, op);
  launch(c, a, count, req, stream);
}

void do_broadcast(const void *sendbuf, void *recvbuf, size_t count, smd_datatype_t dt, int root,
                  smd_comm_t *comm, smd_stream_t stream, smd_request_t **req) {
  CommUse c(comm, req == nullptr);
  size_t es = check_datatype(dt);
  check_root(root, c->size());
  size_t bytes = checked_bytes(count, es, 1, "count");
  if (c->rank() == root) check_buffer(sendbuf, bytes, "sendbuf (at the root)");
  check_buffer(recvbuf, bytes, "recvbuf");
  if (c->rank() == root) check_overlap(sendbuf, bytes, recvbuf, bytes, 0);
  CollArgs a{CollKind::kBroadcast, sendbuf, recvbuf, count, dt, SMD_SUM, root};
  launch(c, a, count, req, stream);
}

void do_reduce(const void *sendbuf, void *recvbuf, size_t count, smd_datatype_t dt, smd_op_t op,
               int root, smd_comm_t *comm, smd_stream_t stream, smd_request_t **req) {
  CommUse c(comm, req == nullptr);
  size_t es = check_datatype(dt);
  check_op(op);
  check_root(root, c->size());
  size_t bytes = checked_bytes(count, es, 1, "count");
  check_buffer(sendbuf, bytes, "sendbuf");
  if (c->rank() == root) {
    check_buffer(recvbuf, bytes, "recvbuf (at the root)");
    check_overlap(sendbuf, bytes, recvbuf, bytes, 0);
  }
  CollArgs a{
      CollKind::kReduce, sendbuf, c->rank() == root ? recvbuf : nullptr, count, dt, op, root};
  launch(c, a, count, req, stream);
}

void do_alltoall(const void *sendbuf, void *recvbuf, size_t count, smd_datatype_t dt,
                 smd_comm_t *comm, smd_stream_t stream, smd_request_t **req) {
  CommUse c(comm, req == nullptr);
  size_t es = check_datatype(dt);
  size_t total = checked_bytes(count, es, c->size(), "count x size");
  check_buffer(sendbuf, total, "sendbuf");
  check_buffer(recvbuf, total, "recvbuf");
  check_overlap(sendbuf, total, recvbuf, total, 0);
  CollArgs a{CollKind::kAlltoall, sendbuf, recvbuf, count, dt, SMD_SUM, 0};
  launch(c, a, count * c->size(), req, stream);
}

// A v-collective's checked arguments. The blocks lie in recvbuf
// (allgatherv) or sendbuf (reduce_scatterv); the other buffer holds this
// rank's block alone, or is that block (in place).
CollArgs v_args(CollKind kind, const Comm &c, const void *sendbuf, void *recvbuf,
                const size_t *counts, const size_t *displs, smd_datatype_t dt, smd_op_t op) {
  size_t es = check_datatype(dt);
  bool blocks_in_send = kind == CollKind::kReduceScatterv;
  auto blocks = check_blocks(counts, displs, c.size(), es, blocks_in_send ? "sendbuf" : "recvbuf");
  size_t own = blocks->counts[size_t(c.rank())] * es, extent = blocks->extent * es;
  size_t own_at = blocks->displs[size_t(c.rank())] * es;
  check_buffer(sendbuf, blocks_in_send ? extent : own, "sendbuf");
  check_buffer(recvbuf, blocks_in_send ? own : extent, "recvbuf");
  if (blocks_in_send) check_overlap(recvbuf, own, sendbuf, extent, own_at);
  else check_overlap(sendbuf, own, recvbuf, extent, own_at);
  CollArgs a{kind, sendbuf, recvbuf, blocks->total, dt, op, static_cast<int>(blocks->digest)};
  a.blocks = std::move(blocks);
  return a;
}

void do_allgatherv(const void *sendbuf, void *recvbuf, const size_t *counts, const size_t *displs,
                   smd_datatype_t dt, smd_comm_t *comm, smd_stream_t stream, smd_request_t **req) {
  CommUse c(comm, req == nullptr);
  CollArgs a = v_args(CollKind::kAllgatherv, *c, sendbuf, recvbuf, counts, displs, dt, SMD_SUM);
  launch(c, a, a.count, req, stream);
}

void do_reduce_scatterv(const void *sendbuf, void *recvbuf, const size_t *counts,
                        const size_t *displs, smd_datatype_t dt, smd_op_t op, smd_comm_t *comm,
                        smd_stream_t stream, smd_request_t **req) {
  CommUse c(comm, req == nullptr);
  check_op(op);
  CollArgs a = v_args(CollKind::kReduceScatterv, *c, sendbuf, recvbuf, counts, displs, dt, op);
  launch(c, a, a.blocks->counts[size_t(c->rank())], req, stream);
}

// alltoallv: sendbuf's blocks go to the ranks, recvbuf's come from them.
// Pairs' counts are checked as the blocks travel (alltoallv.cc).
void do_alltoallv(const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
                  void *recvbuf, const size_t *recvcounts, const size_t *rdispls, smd_datatype_t dt,
                  smd_comm_t *comm, smd_stream_t stream, smd_request_t **req) {
  CommUse c(comm, req == nullptr);
  size_t es = check_datatype(dt);
  // Send blocks are only read: they may overlap (as in MPI).
  auto in = check_blocks(sendcounts, sdispls, c->size(), es, "sendbuf", "sendcounts", true);
  auto out = check_blocks(recvcounts, rdispls, c->size(), es, "recvbuf", "recvcounts");
  size_t in_bytes = in->extent * es, out_bytes = out->extent * es;
  check_buffer(sendbuf, in_bytes, "sendbuf");
  check_buffer(recvbuf, out_bytes, "recvbuf");
  if (sendbuf && sendbuf == recvbuf && (in_bytes || out_bytes))
    fail(SMD_ERR_INVALID_ARGUMENT, "alltoallv is not supported in place (sendbuf == recvbuf)");
  check_overlap(sendbuf, in_bytes, recvbuf, out_bytes, 0);
  CollArgs a{CollKind::kAlltoallv, sendbuf, recvbuf, out->total, dt, SMD_SUM, 0};
  a.blocks = std::move(out);
  a.send_blocks = std::move(in);
  launch(c, a, a.count, req, stream);
}

void do_barrier(smd_comm_t *comm, smd_stream_t stream, smd_request_t **req) {
  CommUse c(comm, req == nullptr);
  CollArgs a;
  a.kind = CollKind::kBarrier;
  launch(c, a, 0, req, stream);
}

}  // namespace

// Each collective's blocking entry point smd_<name> and its nonblocking
// smd_i<name>, from one parameter list: the i-form adds the request out
// pointer, checks it, and hands it to the same do_<name>().
#define SMD_ENTRY_LIST(...) __VA_ARGS__
#define SMD_COLLECTIVE_ENTRIES(name, params, args)                                   \
  SMD_API smd_result_t smd_##name(SMD_ENTRY_LIST params) {                           \
    return guarded("smd_" #name, [&] { do_##name(SMD_ENTRY_LIST args, nullptr); });  \
  }                                                                                  \
  SMD_API smd_result_t smd_i##name(SMD_ENTRY_LIST params, smd_request_t **request) { \
    return guarded("smd_i" #name, [&] {                                              \
      out_request(request);                                                          \
      do_##name(SMD_ENTRY_LIST args, request);                                       \
    });                                                                              \
  }

extern "C" {

SMD_COLLECTIVE_ENTRIES(allreduce,
                       (const void *sendbuf, void *recvbuf, size_t count, smd_datatype_t datatype,
                        smd_op_t op, smd_comm_t *comm, smd_stream_t stream),
                       (sendbuf, recvbuf, count, datatype, op, comm, stream))

SMD_COLLECTIVE_ENTRIES(allgather,
                       (const void *sendbuf, void *recvbuf, size_t sendcount,
                        smd_datatype_t datatype, smd_comm_t *comm, smd_stream_t stream),
                       (sendbuf, recvbuf, sendcount, datatype, comm, stream))

SMD_COLLECTIVE_ENTRIES(reduce_scatter,
                       (const void *sendbuf, void *recvbuf, size_t recvcount,
                        smd_datatype_t datatype, smd_op_t op, smd_comm_t *comm,
                        smd_stream_t stream),
                       (sendbuf, recvbuf, recvcount, datatype, op, comm, stream))

SMD_COLLECTIVE_ENTRIES(broadcast,
                       (const void *sendbuf, void *recvbuf, size_t count, smd_datatype_t datatype,
                        int root, smd_comm_t *comm, smd_stream_t stream),
                       (sendbuf, recvbuf, count, datatype, root, comm, stream))

SMD_COLLECTIVE_ENTRIES(reduce,
                       (const void *sendbuf, void *recvbuf, size_t count, smd_datatype_t datatype,
                        smd_op_t op, int root, smd_comm_t *comm, smd_stream_t stream),
                       (sendbuf, recvbuf, count, datatype, op, root, comm, stream))

SMD_COLLECTIVE_ENTRIES(alltoall,
                       (const void *sendbuf, void *recvbuf, size_t count, smd_datatype_t datatype,
                        smd_comm_t *comm, smd_stream_t stream),
                       (sendbuf, recvbuf, count, datatype, comm, stream))

SMD_COLLECTIVE_ENTRIES(barrier, (smd_comm_t * comm, smd_stream_t stream), (comm, stream))

SMD_COLLECTIVE_ENTRIES(allgatherv,
                       (const void *sendbuf, void *recvbuf, const size_t *counts,
                        const size_t *displs, smd_datatype_t datatype, smd_comm_t *comm,
                        smd_stream_t stream),
                       (sendbuf, recvbuf, counts, displs, datatype, comm, stream))

SMD_COLLECTIVE_ENTRIES(reduce_scatterv,
                       (const void *sendbuf, void *recvbuf, const size_t *counts,
                        const size_t *displs, smd_datatype_t datatype, smd_op_t op,
                        smd_comm_t *comm, smd_stream_t stream),
                       (sendbuf, recvbuf, counts, displs, datatype, op, comm, stream))

SMD_COLLECTIVE_ENTRIES(alltoallv,
                       (const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
                        void *recvbuf, const size_t *recvcounts, const size_t *rdispls,
                        smd_datatype_t datatype, smd_comm_t *comm, smd_stream_t stream),
                       (sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, datatype, comm,
                        stream))

}  // extern "C"
