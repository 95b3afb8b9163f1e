// Point-to-point entry points.
#include <smd.h>

#include "core/api/group_calls.h"
#include "core/api/guard.h"
#include "core/api/handles.h"
#include "core/api/staged_p2p.h"
#include "core/api/validate.h"
#include "core/coll/stream_p2p.h"
#include "core/coll/stream_proxy.h"
#include "core/gpu/pointer_kind.h"

using namespace smd;

namespace {

enum class Dir { kSend, kRecv };

void do_p2p(Dir dir, const void *buf, size_t count, smd_datatype_t dt, int peer, int tag,
            smd_comm_t *comm, smd_stream_t stream, smd_request_t **req,
            smd_status_t *status = nullptr) {
  if (req) {
    *req = nullptr;
  }
  auto c = comm_of(comm);
  const bool ordered = stream_ordered(stream);
  size_t es = check_datatype(dt);
  size_t bytes = checked_bytes(count, es, 1, "count");
  check_buffer(buf, bytes, "buf");
  // Device memory with a stream goes through the stream proxy, which
  // stages it on the stream; with NULL it is staged here through a host
  // copy (staged_p2p.h), host-synchronous as a collective's on NULL. Host
  // memory with a stream runs after the stream's earlier work.
  const bool on_device = p2p_on_device(buf, "buf");
  bool any_source = dir == Dir::kRecv && peer == SMD_ANY_SOURCE;
  bool any_tag = dir == Dir::kRecv && tag == SMD_ANY_TAG;
  if (!any_source && (peer < 0 || peer >= c->size()))
    fail(SMD_ERR_INVALID_ARGUMENT, "peer %d is not a rank of the communicator (size %d)%s", peer,
         c->size(), dir == Dir::kRecv ? " nor SMD_ANY_SOURCE" : "");
  if (!any_tag && (tag < 0 || tag > SMD_TAG_MAX))
    fail(SMD_ERR_INVALID_ARGUMENT, "tag %d is not in [0, SMD_TAG_MAX=%d]%s", tag, SMD_TAG_MAX,
         dir == Dir::kRecv ? " nor SMD_ANY_TAG" : "");
  if (status) check_status(status);
  c->check_usable();
  if (on_device && group_open())  // staged with the whole group (group_calls.h)
    return group_queue_p2p(c, dir == Dir::kSend, const_cast<void *>(buf), bytes, es, peer, tag, req,
                           stream, true);
  if (on_device && ordered) {
    if (status)
      fail(SMD_ERR_NOT_SUPPORTED,
           "smd_recv_status on device memory with a stream: the status is known only once the "
           "stream has run; use smd_irecv and smd_request_wait, or smd_recv");
    std::shared_ptr<Task> task =
        dir == Dir::kSend ? send_on_stream(*c, buf, bytes, peer, tag, stream)
                          : recv_on_stream(*c, const_cast<void *>(buf), bytes, peer, tag, stream);
    if (req) {
      auto r = std::make_unique<smd_request>();
      r->comm = c;
      r->count = count;
      r->elem_size = es;
      r->op = "stream-ordered " + p2p_description(dir == Dir::kSend, peer, tag);
      r->task = std::move(task);
      request_registry().add(r.get());
      *req = r.release();
    }
    return;
  }
  if (ordered) wait_for_stream(stream);  // host memory: after the stream's earlier work
  if (group_open())
    return group_queue_p2p(c, dir == Dir::kSend, const_cast<void *>(buf), bytes, es, peer, tag, req,
                           ordered ? stream : nullptr);
  std::string what = p2p_description(dir == Dir::kSend, peer, tag);
  std::string buffer = dir == Dir::kRecv ? buffer_description(count, dt) : "";
  P2PMatcher &m = c->user_p2p();
  auto r = std::make_unique<smd_request>();
  r->comm = c;
  r->is_p2p = true;
  r->elem_size = es;
  r->op = what;
  r->buffer = buffer;
  if (dir == Dir::kSend) {
    const void *payload = on_device ? stage_p2p_send(*r, buf, bytes) : buf;
    r->envelope = std::make_unique<P2PMatcher::Envelope>();
    m.isend(peer, payload, bytes, tag, r->envelope.get(), &r->envelope_req, &r->p2p);
  } else {
    void *into = const_cast<void *>(buf);
    r->user_recv = m.irecv(peer, tag, on_device ? stage_p2p_recv(*r, into, bytes) : into, bytes);
  }
  if (!req) {
    // The status is the message's as far as it was matched, failed or not.
    struct Report {
      const smd_request &r;
      smd_status_t *status;
      ~Report() {
        if (status) request_status(r, status);
      }
    } report{*r, status};
    try {
      if (r->user_recv) {
        m.wait(*r->user_recv, "receive");
        land_p2p_recv(*r, r->user_recv->bytes);
      } else {
        P2PReq *both[] = {&r->envelope_req, &r->p2p};
        c->wait_ptrs(both, 2, "send");
      }
    } catch (const Error &e) {
      throw Error(e.code(), operation_message(e, what, buffer));
    }
    return;
  }
  request_registry().add(r.get());
  *req = r.release();
}

}  // namespace

extern "C" {

SMD_API smd_result_t smd_send(const void *buf, size_t count, smd_datatype_t datatype, int peer,
                              int tag, smd_comm_t *comm, smd_stream_t stream) {
  return guarded("smd_send", [&] {
    do_p2p(Dir::kSend, buf, count, datatype, peer, tag, comm, stream, nullptr);
  });
}

SMD_API smd_result_t smd_isend(const void *buf, size_t count, smd_datatype_t datatype, int peer,
                               int tag, smd_comm_t *comm, smd_stream_t stream,
                               smd_request_t **request) {
  return guarded("smd_isend", [&] {
    if (!request) fail(SMD_ERR_INVALID_ARGUMENT, "request is NULL");
    do_p2p(Dir::kSend, buf, count, datatype, peer, tag, comm, stream, request);
  });
}

SMD_API smd_result_t smd_recv(void *buf, size_t count, smd_datatype_t datatype, int peer, int tag,
                              smd_comm_t *comm, smd_stream_t stream) {
  return guarded("smd_recv", [&] {
    do_p2p(Dir::kRecv, buf, count, datatype, peer, tag, comm, stream, nullptr);
  });
}

SMD_API smd_result_t smd_recv_status(void *buf, size_t count, smd_datatype_t datatype, int peer,
                                     int tag, smd_comm_t *comm, smd_stream_t stream,
                                     smd_status_t *status) {
  return guarded("smd_recv_status", [&] {
    do_p2p(Dir::kRecv, buf, count, datatype, peer, tag, comm, stream, nullptr, status);
  });
}

SMD_API smd_result_t smd_irecv(void *buf, size_t count, smd_datatype_t datatype, int peer, int tag,
                               smd_comm_t *comm, smd_stream_t stream, smd_request_t **request) {
  return guarded("smd_irecv", [&] {
    if (!request) fail(SMD_ERR_INVALID_ARGUMENT, "request is NULL");
    do_p2p(Dir::kRecv, buf, count, datatype, peer, tag, comm, stream, request);
  });
}

}  // extern "C"
