// connect and disconnect: a UCX endpoint per peer, created from the
// peer's worker address with peer-failure handling, closed after a
// bounded flush.
#include <algorithm>
#include <cstdio>
#include <memory>

#include "address.h"
#include "arg_checks.h"
#include "context.h"

namespace smd_ucx {

// A live peer acknowledges a flush in microseconds; a dead or stuck one
// is not waited for longer than this before the endpoint is forced shut.
constexpr int64_t kFlushNs = 1'000'000'000;
constexpr int64_t kCloseNs = 1'000'000'000;

Status endpoint_connect(Context *ctx, int32_t peer, const void *address, size_t size, void **out) {
  if (Status s = smd_plugin::check_connect_args(ctx, "ucx", peer, out)) return s;
  if (ctx->by_peer.count(peer) != 0)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "ucx: connect: already connected to rank %d", peer);
  const unsigned char *worker = nullptr;
  size_t worker_length = 0;
  char why[300];
  if (!address_decode(address, size, peer, ctx->world_size, &worker, &worker_length, why,
                      sizeof why))
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "ucx: cannot connect to rank %d: %s", peer, why);

  auto ep = std::make_unique<Endpoint>();
  ep->magic = kEndpointMagic;
  ep->ctx = ctx;
  ep->peer = peer;
  ucp_ep_params_t p;
  p.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                 UCP_EP_PARAM_FIELD_ERR_HANDLER;
  p.address = reinterpret_cast<const ucp_address_t *>(worker);
  p.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  p.err_handler.cb = on_endpoint_error;
  p.err_handler.arg = ep.get();
  ucx_log_clear();
  ucs_status_t s = ucp_ep_create(ctx->worker, &p, &ep->ep);
  if (s != UCS_OK) {
    std::string said = ucx_log_last();
    return fail(ctx, s == UCS_ERR_UNREACHABLE ? SMD_TRANSPORT_ERR_PEER : SMD_TRANSPORT_ERR_SYSTEM,
                "ucx: cannot create an endpoint to rank %d (UCX_TLS=%s): "
                "%s%s%s",
                peer, ctx->tls.c_str(), ucs_status_string(s),
                said.empty() ? "" : "; UCX says: ", said.c_str());
  }
  ctx->endpoints.push_back(ep.get());
  ctx->by_peer[peer] = ep.get();
  *out = ep.release();
  return SMD_TRANSPORT_OK;
}

// Waits (progressing) until every request in reqs has finished or the
// deadline passes; frees them all either way.
static void settle(Context *ctx, std::vector<void *> &reqs, int64_t ns) {
  int64_t deadline = now_ns() + ns;
  for (;;) {
    bool all = true;
    for (void *r : reqs)
      if (ucp_request_check_status(r) == UCS_INPROGRESS) all = false;
    if (all || now_ns() >= deadline) break;
    progress(ctx);
  }
  for (void *r : reqs) ucp_request_free(r);
  reqs.clear();
}

void endpoints_close(Context *ctx, const std::vector<Endpoint *> &eps) {
  // Receives are the worker's: withdraw those posted for these peers.
  for (Endpoint *ep : eps) {
    ep->closing = true;
    std::vector<Request *> receives;
    for (Request *r = ep->pending.head; r != nullptr; r = r->next)
      if (r->kind == ReqKind::kRecv && r->ucx != nullptr) receives.push_back(r);
    for (Request *r : receives) ucp_request_cancel(ctx->worker, r->ucx);
  }
  // Let what we sent reach live peers.
  std::vector<void *> reqs;
  ucp_request_param_t none;
  none.op_attr_mask = 0;
  for (Endpoint *ep : eps) {
    if (ep->failed) continue;
    ucs_status_ptr_t sp = ucp_ep_flush_nbx(ep->ep, &none);
    if (UCS_PTR_IS_PTR(sp)) reqs.push_back(sp);
  }
  settle(ctx, reqs, kFlushNs);
  // Then close without waiting for the peer: its endpoint sees the
  // connection go, which is what it would see if we exited.
  ucp_request_param_t force;
  force.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  force.flags = UCP_EP_CLOSE_FLAG_FORCE;
  for (Endpoint *ep : eps) {
    rkeys_release(ep);
    ucs_status_ptr_t sp = ucp_ep_close_nbx(ep->ep, &force);
    if (UCS_PTR_IS_PTR(sp)) reqs.push_back(sp);
  }
  settle(ctx, reqs, kCloseNs);
  for (Endpoint *ep : eps) {
    char text[120];
    snprintf(text, sizeof text, "ucx: endpoint to rank %d disconnected", ep->peer);
    while (Request *r = ep->pending.head) {
      request_abandon(ctx, r);
      request_finish(ctx, r, SMD_TRANSPORT_ERR_CANCELED, 0, text);
    }
    auto drop = [ep](std::vector<Endpoint *> &v) {
      v.erase(std::remove(v.begin(), v.end(), ep), v.end());
    };
    drop(ctx->endpoints);
    drop(ctx->failed);
    ctx->by_peer.erase(ep->peer);
    ep->magic = 0;
    delete ep;
  }
}

Status endpoint_disconnect(Context *ctx, Endpoint *ep) {
  endpoints_close(ctx, {ep});
  return SMD_TRANSPORT_OK;
}

}  // namespace smd_ucx
