// Point-to-point entry points.
#include <smd.h>

#include "core/api/guard.h"
#include "core/api/handles.h"
#include "core/api/validate.h"

using namespace smd;

namespace {

enum class Dir { kSend, kRecv };

void do_p2p(Dir dir, const void *buf, size_t count, smd_datatype_t dt, int peer, int tag,
            smd_comm_t *comm, smd_stream_t stream, smd_request_t **req) {
  if (req) {
    *req = nullptr;
  }
  auto c = comm_of(comm);
  check_stream(stream);
  size_t es = check_datatype(dt);
  size_t bytes = checked_bytes(count, es, 1, "count");
  check_buffer(buf, bytes, "buf");
  check_host_memory(buf, "buf");
  if (peer < 0 || peer >= c->size())
    fail(SMD_ERR_INVALID_ARGUMENT, "peer %d is not a rank of the communicator (size %d)", peer,
         c->size());
  if (tag < 0 || tag > SMD_TAG_MAX)
    fail(SMD_ERR_INVALID_ARGUMENT, "tag %d is not in [0, SMD_TAG_MAX=%d]", tag, SMD_TAG_MAX);
  c->check_usable();
  uint64_t t = make_tag(TagKind::kP2P, c->id(), static_cast<uint32_t>(tag));
  P2PReq p = dir == Dir::kSend ? c->isend(peer, buf, bytes, t)
                               : c->irecv(peer, const_cast<void *>(buf), bytes, t);
  if (!req) {
    c->wait(p, dir == Dir::kSend ? "send" : "receive");
    return;
  }
  auto *r = new smd_request();
  r->comm = c;
  r->p2p = p;
  r->is_p2p = true;
  r->elem_size = es;
  request_registry().add(r);
  *req = r;
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

SMD_API smd_result_t smd_irecv(void *buf, size_t count, smd_datatype_t datatype, int peer, int tag,
                               smd_comm_t *comm, smd_stream_t stream, smd_request_t **request) {
  return guarded("smd_irecv", [&] {
    if (!request) fail(SMD_ERR_INVALID_ARGUMENT, "request is NULL");
    do_p2p(Dir::kRecv, buf, count, datatype, peer, tag, comm, stream, request);
  });
}

}  // extern "C"
