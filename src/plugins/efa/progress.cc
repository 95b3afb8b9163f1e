// Progress and waiting. Manual-progress providers (tcp;ofi_rxm, shm, efa)
// move data only inside libfabric calls, so every pass reads the
// completion queue, posts what the provider refused earlier, and, while
// requests are pending, looks at the liveness sockets.
#include <poll.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <vector>

#include "context.h"

namespace smd_efa {

// wait() polls this long, yielding the core, before it sleeps: a sleep
// and wake-up cost tens of microseconds on a busy machine.
constexpr uint64_t kYieldNs = 50'000;
// Without a wait object: sleeps between polls after the yield phase.
constexpr long kNapNs = 100'000;

void progress(Context *ctx) {
  drain_cq(ctx, 16);
  std::vector<Endpoint *> &backlog = ctx->backlog;
  for (size_t i = 0; i < backlog.size();) {
    Endpoint *ep = backlog[i];
    flush_queues(ctx, ep);
    if (ep->queued()) {
      ++i;
      continue;
    }
    ep->in_backlog = false;
    backlog[i] = backlog.back();
    backlog.pop_back();
  }
  liveness_tick(ctx, false);
  if (ctx->reap) {
    ctx->reap = false;
    std::vector<Endpoint *> done;
    for (Endpoint *ep : ctx->endpoints)
      if (ep->disconnected && ep->owned == 0) done.push_back(ep);
    for (Endpoint *ep : done) endpoint_reap(ctx, ep);
  }
}

// Sleeps on the completion queue's wait object and the liveness sockets
// until something arrives or `until`. False if the provider cannot block.
static bool sleep_on_fds(Context *ctx, uint64_t until) {
  struct fid *fids[1] = {&ctx->cq->fid};
  int rc = fi_trywait(ctx->fabric, fids, 1);
  if (rc == -FI_EAGAIN) return true;  // events pending: the caller progresses
  if (rc != 0) return false;
  std::vector<int> extra;
  liveness_fds(ctx, &extra);
  std::vector<struct pollfd> fds;
  fds.push_back({ctx->wait_fd, POLLIN, 0});
  for (int fd : extra) fds.push_back({fd, POLLIN, 0});
  uint64_t now = monotonic_ns();
  uint64_t left = until > now ? until - now : 0;
  struct timespec ts = {time_t(left / 1000000000u), long(left % 1000000000u)};
  if (ppoll(fds.data(), fds.size(), &ts, nullptr) > 0)
    for (size_t i = 1; i < fds.size(); ++i)
      if (fds[i].revents != 0) liveness_tick(ctx, true);
  return true;
}

Status wait_for_work(Context *ctx, int64_t timeout_us) {
  uint64_t start = monotonic_ns();
  uint64_t until = start + uint64_t(std::max<int64_t>(timeout_us, 0)) * 1000u;
  uint64_t seen = ctx->events;
  progress(ctx);
  uint64_t yield_until = std::min(until, start + kYieldNs);
  while (ctx->events == seen && monotonic_ns() < yield_until) {
    sched_yield();
    progress(ctx);
  }
  bool can_block = ctx->prov.wait_fd;
  while (ctx->events == seen && monotonic_ns() < until) {
    if (!can_block || !sleep_on_fds(ctx, until)) {
      can_block = false;
      struct timespec nap = {0, kNapNs};
      nanosleep(&nap, nullptr);
    }
    progress(ctx);
  }
  return SMD_TRANSPORT_OK;
}

}  // namespace smd_efa
