// The life of a request: started on an endpoint, linked where its phase
// says, completed exactly once.
#include <algorithm>

#include "context.h"

namespace smd_shm {

Request *request_start(Context *ctx, Endpoint *ep, ReqKind kind, void *buf, size_t size,
                       uint64_t tag) {
  Request *r = ctx->pool.alloc();
  r->kind = kind;
  r->ep = ep;
  r->buf = static_cast<char *>(buf);
  r->size = size;
  r->tag = tag;
  r->phase = Phase::kSendQueued;  // callers set the real phase
  ep->pending.push(r);
  ++ctx->unfinished;
  return r;
}

void request_complete(Context *ctx, Request *r, Status status, uint64_t bytes) {
  if (r->ep != nullptr) r->ep->pending.remove(r);
  r->ep = nullptr;
  r->phase = Phase::kDone;
  r->status = status;
  r->bytes = bytes;
  --ctx->unfinished;
  ++ctx->events;
}

void request_unlink(Context *ctx, Request *r) {
  Endpoint *ep = r->ep;
  switch (r->phase) {
    case Phase::kDone: break;
    case Phase::kSendQueued:
      for (OutItem &item : ep->queue)
        if (item.req == r) item.req = nullptr;
      break;
    case Phase::kSendAwait:
      // The receiver holds our descriptor: tell it to forget it.
      send_control(ctx, ep, kRetract, r->id(), 0, 0);
      break;
    case Phase::kSendStream:
      for (auto it = ep->streams.begin(); it != ep->streams.end(); ++it)
        if (it->req == r) {
          send_control(ctx, ep, kAbort, it->recv_id, 0, 0);
          ep->streams.erase(it);
          break;
        }
      break;
    case Phase::kRecvPosted: ep->posted.remove(r); break;
    case Phase::kRecvCopy: {
      auto it = std::find(ctx->copies.begin(), ctx->copies.end(), r);
      if (it != ctx->copies.end()) ctx->copies.erase(it);
      // The sender waits for our ACK; release it with an error.
      send_control(ctx, ep, kAck, r->peer_id, SMD_TRANSPORT_ERR_CANCELED, 0);
      break;
    }
    case Phase::kRecvStream: break;  // later kData cells find no request and are dropped
  }
}

}  // namespace smd_shm
