// Large messages. The sender publishes a descriptor (kRts); once a receive
// matches it, the receiver copies straight out of the sender's memory with
// process_vm_readv and acknowledges (kAck). Without CMA the receiver asks
// for the data instead (kCts) and the sender streams it through the ring
// (kData), which also answers igets when CMA is off.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "context.h"

namespace smd_shm {

static void stream_request(Context *ctx, Request *r) {
  r->phase = Phase::kRecvStream;
  send_control(ctx, r->ep, kCts, r->peer_id, r->want, r->id());
  if (r->want == 0) recv_finish(ctx, r, r->msg_size, 0);
}

void rendezvous_match(Context *ctx, Request *r, uint64_t send_id, uint64_t addr,
                      uint64_t msg_size) {
  Endpoint *ep = r->ep;
  r->peer_id = send_id;
  r->remote = addr;
  r->msg_size = msg_size;
  r->want = std::min<uint64_t>(r->size, msg_size);
  r->done = 0;
  if (ep->dead) {
    r->error = ep->death;
    request_complete(ctx, r, SMD_TRANSPORT_ERR_PEER, 0);
    return;
  }
  if (ep->cma || ep->self) {
    r->phase = Phase::kRecvCopy;
    ctx->copies.push_back(r);
    return;
  }
  stream_request(ctx, r);
}

static void copy_done(Context *ctx, Request *r) {
  send_control(ctx, r->ep, kAck, r->peer_id, SMD_TRANSPORT_OK, 0);
  recv_finish(ctx, r, r->msg_size, r->want);
}

// Advances one copy by a chunk. False if the request left ctx->copies.
static bool copy_step(Context *ctx, Request *r) {
  Endpoint *ep = r->ep;
  uint64_t len = std::min<uint64_t>(r->want - r->done, ctx->cma_chunk);
  long n;
  if (ep->self) {
    memcpy(r->buf + r->done, reinterpret_cast<const char *>(r->remote + r->done), len);
    n = long(len);
  } else {
    n = cma_read(ep->pid, r->buf + r->done, r->remote + r->done, len);
  }
  if (n >= 0) {
    r->done += uint64_t(n);
    if (r->done < r->want) return true;
    copy_done(ctx, r);
    return false;
  }
  if (n == -ESRCH) {
    peer_died(ctx, ep, "exited");
    return false;
  }
  if ((n == -EPERM || n == -EACCES || n == -ENOSYS) && r->done == 0) {
    log_line(ctx, SMD_TRANSPORT_LOG_INFO,
             "shm: process_vm_readv from rank %d denied (%s); its large "
             "messages go through the ring",
             ep->peer, strerror(int(-n)));
    ep->cma = false;
    stream_request(ctx, r);
    return false;
  }
  // The sender's buffer is not readable: fail both sides.
  send_control(ctx, ep, kAck, r->peer_id, SMD_TRANSPORT_ERR_INVALID, 0);
  char text[240];
  snprintf(text, sizeof text,
           "shm: cannot read the %llu-byte message of rank %d (pid %d) at "
           "0x%llx: %s",
           (unsigned long long)r->msg_size, ep->peer, int(ep->pid), (unsigned long long)r->remote,
           strerror(int(-n)));
  r->error = text;
  request_complete(ctx, r, SMD_TRANSPORT_ERR_SYSTEM, r->done);
  return false;
}

void rendezvous_copy_step(Context *ctx) {
  // A step may complete requests or fail a dead peer's, which edits
  // ctx->copies: walk a snapshot. A pass copies at most two chunks, so
  // progress stays short however many large receives are under way; the
  // copy served first rotates.
  std::vector<Request *> batch(ctx->copies);
  std::vector<Request *> &copies = ctx->copies;
  uint64_t budget = 2 * uint64_t(ctx->cma_chunk);
  size_t first = ctx->copy_cursor++ % batch.size();
  for (size_t i = 0; i < batch.size() && budget > 0; ++i) {
    Request *r = batch[(first + i) % batch.size()];
    if (std::find(copies.begin(), copies.end(), r) == copies.end()) continue;
    uint64_t before = r->done;
    bool stays = copy_step(ctx, r);
    uint64_t moved = r->done > before ? r->done - before : 0;
    budget -= moved < budget ? moved : budget;
    if (stays) continue;
    auto it = std::find(copies.begin(), copies.end(), r);
    if (it != copies.end()) copies.erase(it);
  }
}

static Request *find_request(Context *ctx, uint64_t id, Endpoint *ep, Phase phase) {
  Request *r = ctx->pool.find(id);
  return r != nullptr && r->ep == ep && r->phase == phase ? r : nullptr;
}

void rendezvous_on_ack(Context *ctx, Endpoint *ep, const CellHeader &h) {
  Request *r = find_request(ctx, h.id, ep, Phase::kSendAwait);
  if (r == nullptr) return;
  auto status = static_cast<Status>(h.size);
  if (status == SMD_TRANSPORT_OK) {
    request_complete(ctx, r, SMD_TRANSPORT_OK, r->size);
    return;
  }
  char text[200];
  snprintf(text, sizeof text,
           status == SMD_TRANSPORT_ERR_CANCELED
               ? "shm: rank %d cancelled the receive of this %zu-byte send"
               : "shm: rank %d could not read this %zu-byte send's buffer",
           ep->peer, r->size);
  r->error = text;
  request_complete(ctx, r, status, 0);
}

void rendezvous_on_cts(Context *ctx, Endpoint *ep, const CellHeader &h) {
  Request *r = find_request(ctx, h.id, ep, Phase::kSendAwait);
  if (r == nullptr) {
    send_control(ctx, ep, kAbort, h.tag, 0, 0);  // the send was cancelled
    return;
  }
  uint64_t want = std::min<uint64_t>(h.size, r->size);
  if (want == 0) {
    request_complete(ctx, r, SMD_TRANSPORT_OK, r->size);
    return;
  }
  r->phase = Phase::kSendStream;
  send_stream(ctx, ep, Stream{r, r->buf, h.tag, 0, want});
}

void rendezvous_on_data(Context *ctx, Endpoint *ep, const CellHeader &h,
                        const unsigned char *payload) {
  Request *r = find_request(ctx, h.id, ep, Phase::kRecvStream);
  if (r == nullptr || h.size > r->want || h.len > r->want - h.size) return;
  memcpy(r->buf + h.size, payload, h.len);
  r->done += h.len;
  if (r->done < r->want) return;
  if (r->kind == ReqKind::kGet) request_complete(ctx, r, SMD_TRANSPORT_OK, r->want);
  else recv_finish(ctx, r, r->msg_size, r->want);
}

static void set_cancelled_by_sender(Request *r, Endpoint *ep) {
  char text[80];
  snprintf(text, sizeof text, "shm: rank %d cancelled the send", ep->peer);
  r->error = text;
}

void rendezvous_on_retract(Context *ctx, Endpoint *ep, uint64_t send_id) {
  Unexpected *found = nullptr;
  ep->unexpected.for_each([&](Unexpected *u) {
    if (u->rendezvous && u->send_id == send_id) found = u;
  });
  if (found != nullptr) {
    ep->unexpected.remove(found);
    delete found;
    return;
  }
  for (Request *r : ctx->copies)
    if (r->ep == ep && r->peer_id == send_id) {
      ctx->copies.erase(std::find(ctx->copies.begin(), ctx->copies.end(), r));
      set_cancelled_by_sender(r, ep);
      request_complete(ctx, r, SMD_TRANSPORT_ERR_CANCELED, r->done);
      return;
    }
  // A receive already streaming gets kAbort when the sender sees its kCts.
}

void rendezvous_on_abort(Context *ctx, Endpoint *ep, uint64_t recv_id) {
  Request *r = find_request(ctx, recv_id, ep, Phase::kRecvStream);
  if (r == nullptr) return;
  set_cancelled_by_sender(r, ep);
  request_complete(ctx, r, SMD_TRANSPORT_ERR_CANCELED, r->done);
}

void rendezvous_on_get(Context *ctx, Endpoint *ep, const CellHeader &h) {
  if (h.size == 0) return;
  send_stream(ctx, ep, Stream{nullptr, reinterpret_cast<const char *>(h.tag), h.id, 0, h.size});
}

}  // namespace smd_shm
