// Peers that die or become unreachable. UCX reports a failed endpoint
// through its error callback (the endpoints are created with
// UCP_ERR_HANDLING_MODE_PEER) and fails the sends and reads queued on it;
// receives, though, belong to the worker, not to an endpoint, so a
// receive from a dead peer would wait forever. progress() therefore
// withdraws the receives that matched nothing, and gives UCX a grace
// period for anything else before failing it here.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "context.h"

namespace smd_ucx {

constexpr int64_t kGraceNs = 2'000'000'000;

static void track(Context *ctx, Endpoint *ep) {
  if (std::find(ctx->failed.begin(), ctx->failed.end(), ep) == ctx->failed.end())
    ctx->failed.push_back(ep);
}

void on_endpoint_error(void *arg, ucp_ep_h, ucs_status_t status) {
  auto *ep = static_cast<Endpoint *>(arg);
  if (ep->closing) return;
  peer_failed(ep->ctx, ep, status);
}

void peer_failed(Context *ctx, Endpoint *ep, ucs_status_t why) {
  if (ep->failed) return;
  ep->failed = true;
  ep->failure = why;
  char text[200];
  snprintf(text, sizeof text, "ucx peer rank %d: %s", ep->peer, ucs_status_string(why));
  ep->death = text;
  // Also what every orderly shutdown of a peer looks like: not a warning.
  log_line(ctx, SMD_TRANSPORT_LOG_INFO, "%s", text);
  track(ctx, ep);
}

// A receive that matched nothing ends at once (as ERR_PEER: the endpoint
// has failed); one that matched a message UCX is still fetching stays.
static void withdraw(Context *ctx, Request *r) {
  if (r->ucx != nullptr) ucp_request_cancel(ctx->worker, r->ucx);
}

void peer_failed_receive(Context *ctx, Endpoint *ep, Request *r) {
  withdraw(ctx, r);
  if (r->done) return;
  ep->give_up_ns = std::max(ep->give_up_ns, now_ns() + kGraceNs);
  track(ctx, ep);
}

void failures_step(Context *ctx) {
  if (ctx->failed.empty()) return;
  int64_t now = now_ns();
  for (size_t i = 0; i < ctx->failed.size();) {
    Endpoint *ep = ctx->failed[i];
    if (!ep->failure_handled) {
      ep->failure_handled = true;
      ep->give_up_ns = now + kGraceNs;
      std::vector<Request *> receives;
      for (Request *r = ep->pending.head; r != nullptr; r = r->next)
        if (r->kind == ReqKind::kRecv) receives.push_back(r);
      for (Request *r : receives) withdraw(ctx, r);
    }
    if (!ep->pending.empty() && now >= ep->give_up_ns)
      while (Request *r = ep->pending.head) {
        request_abandon(ctx, r);
        request_finish(ctx, r, SMD_TRANSPORT_ERR_PEER, 0, ep->death);
      }
    if (ep->pending.empty()) {
      ctx->failed.erase(ctx->failed.begin() + long(i));
      continue;
    }
    ++i;
  }
}

}  // namespace smd_ucx
