// isend: one ucp_tag_send_nbx, tagged with our rank above the core's
// bits. UCX picks the protocol (eager copies, zero-copy, rendezvous for
// large messages) and registers memory itself when a protocol needs it.
#include "context.h"
#include "wire_tag.h"

namespace smd_ucx {

Status send_start(Context *ctx, Endpoint *ep, const void *buf, size_t size, uint64_t tag,
                  void **request) {
  if (!tag_fits(tag))
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                "ucx: isend: tag 0x%llx uses bits above the %u the core may use",
                (unsigned long long)tag, kRankShift);
  if (ep->failed) return fail(ctx, SMD_TRANSPORT_ERR_PEER, "%s", ep->death.c_str());
  Request *r = request_start(ctx, ep, ReqKind::kSend, size, tag);
  ucp_request_param_t p = send_params(r);
  request_attach(ctx, r, ucp_tag_send_nbx(ep->ep, buf, size, wire_tag(ctx->rank, tag), &p));
  *request = r;
  return SMD_TRANSPORT_OK;
}

}  // namespace smd_ucx
