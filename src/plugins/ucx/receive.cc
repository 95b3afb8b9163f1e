// irecv: one ucp_tag_recv_nbx on the worker for (sender rank, tag) with a
// full mask, so it matches only that peer's messages with that tag, in
// the order the peer sent them.
#include "context.h"
#include "wire_tag.h"

namespace smd_ucx {

Status recv_start(Context *ctx, Endpoint *ep, void *buf, size_t size, uint64_t tag,
                  void **request) {
  if (!tag_fits(tag))
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                "ucx: irecv: tag 0x%llx uses bits above the %u the core may use",
                (unsigned long long)tag, kRankShift);
  Request *r = request_start(ctx, ep, ReqKind::kRecv, size, tag);
  ucp_request_param_t p;
  // Every completion comes through the callback: UCX 1.13 does not fill
  // recv_info when a receive completes inside the call, so the length of
  // a message that was already here would be lost.
  p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                   UCP_OP_ATTR_FIELD_MEMORY_TYPE | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  p.cb.recv = on_recv_done;
  p.user_data = r;
  p.memory_type = UCS_MEMORY_TYPE_HOST;
  ucs_status_ptr_t sp =
      ucp_tag_recv_nbx(ctx->worker, buf, size, wire_tag(ep->peer, tag), kFullMask, &p);
  request_attach(ctx, r, sp);
  // From a peer known to be dead, only what already arrived can come:
  // a receive that matched nothing is withdrawn now.
  if (ep->failed && !r->done) peer_failed_receive(ctx, ep, r);
  *request = r;
  return SMD_TRANSPORT_OK;
}

}  // namespace smd_ucx
