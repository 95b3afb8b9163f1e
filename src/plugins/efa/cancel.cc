// Ending requests early: cancel(), disconnect() and a peer's death. A
// request the provider still holds is cancelled there (fi_cancel); only a
// receive's cancellation is dependable (a send may already be on the
// wire), so cancel() waits for a receive to come back and gives a send a
// moment only.
#include <rdma/fi_endpoint.h>
#include <sched.h>

#include <algorithm>

#include "context.h"

namespace smd_efa {

constexpr uint64_t kRecvCancelNs = 2'000'000'000;
constexpr uint64_t kSendCancelNs = 20'000'000;
// After a peer's death is noticed: how long to keep collecting what it sent
// before it went, while requests on it are still pending.
constexpr uint64_t kLastWordsNs = 250'000'000;

void request_stop(Context *ctx, Request *r, Status status, const char *why, bool wait) {
  if (r->state == ReqState::kDone) return;
  if (why != nullptr && r->error.empty()) r->error = why;
  Endpoint *ep = r->ep;
  if (frame_unpost(ctx, r)) {  // held in software only
    request_finish(ctx, r, status, 0);
    return;
  }
  if (r->state == ReqState::kQueued) {
    std::deque<Request *> &q = ep->queue_of(r);
    auto it = std::find(q.begin(), q.end(), r);
    if (it != q.end()) q.erase(it);
    request_finish(ctx, r, status, 0);
    return;
  }
  r->stopping = status;
  fi_cancel(&ctx->ep->fid, &r->fi);
  if (wait) {
    uint64_t until = monotonic_ns() + (r->kind == ReqKind::kRecv ? kRecvCancelNs : kSendCancelNs);
    while (r->posted && monotonic_ns() < until)
      if (drain_cq(ctx, 4) == 0) sched_yield();
    if (r->posted && r->kind == ReqKind::kRecv)
      log_line(ctx, SMD_TRANSPORT_LOG_WARN,
               "efa: provider %s did not give back a cancelled receive from "
               "rank %d; it keeps its context",
               ctx->prov.name.c_str(), ep->peer);
  }
  // Still posted: finished for the caller, abandoned when released.
  if (r->state != ReqState::kDone) request_finish(ctx, r, status, 0);
}

Status request_cancel(Context *ctx, Request *r) {
  if (r->state != ReqState::kDone)
    request_stop(ctx, r, SMD_TRANSPORT_ERR_CANCELED, "efa: request cancelled", true);
  request_release(ctx, r);
  return SMD_TRANSPORT_OK;
}

void endpoint_fail(Context *ctx, Endpoint *ep, const std::string &why) {
  if (ep->dead) return;
  ep->dead = true;
  ep->death = why;
  log_line(ctx, SMD_TRANSPORT_LOG_WARN, "%s", why.c_str());
  while (Request *r = ep->pending.head)
    request_stop(ctx, r, SMD_TRANSPORT_ERR_PEER, ep->death.c_str(), false);
  liveness_unwatch(ep);
}

void peer_lost(Context *ctx, Endpoint *ep, const std::string &why) {
  if (ep->dead) return;
  // Messages and acknowledgements the peer sent before it went may still
  // be on their way: the provider's sockets and the liveness socket are not
  // ordered with each other (between fake nodes they cross different veth
  // queues), so a peer that sent its last message and exited can close its
  // liveness socket first. A few empty polls prove nothing; keep reading
  // until nothing on this endpoint is pending or the window ends.
  uint64_t until = monotonic_ns() + kLastWordsNs;
  while (!ep->pending.empty() && monotonic_ns() < until)
    if (drain_cq(ctx, 16) == 0) sched_yield();
  endpoint_fail(ctx, ep, why);
}

}  // namespace smd_efa
