// Progress: UCX does all its work (sending, receiving, matching, calling
// our completion callbacks) inside ucp_worker_progress.
#include "context.h"

namespace smd_ucx {

// A peer streaming at us keeps UCX busy forever; progress still returns.
constexpr int kMaxPasses = 16;

unsigned progress(Context *ctx) {
  unsigned events = 0;
  for (int i = 0; i < kMaxPasses; ++i) {
    unsigned n = ucp_worker_progress(ctx->worker);
    events += n;
    if (n == 0) break;
  }
  failures_step(ctx);
  return events;
}

}  // namespace smd_ucx
