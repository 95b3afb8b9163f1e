// Progress, test and cancel: one pass consumes every inbound ring,
// advances CMA copies, pushes queued output and, while requests are
// pending, watches for dead peers.
#include "context.h"

namespace smd_shm {

void progress(Context *ctx) {
  for (Endpoint *ep : ctx->endpoints) recv_drain(ctx, ep);
  if (!ctx->copies.empty()) rendezvous_copy_step(ctx);
  std::vector<Endpoint *> &senders = ctx->senders;
  for (size_t i = 0; i < senders.size();) {
    Endpoint *ep = senders[i];
    send_flush(ctx, ep);
    if (!send_idle(ep)) {
      ++i;
      continue;
    }
    ep->in_senders = false;
    senders[i] = senders.back();
    senders.pop_back();
  }
  liveness_tick(ctx);
}

}  // namespace smd_shm
