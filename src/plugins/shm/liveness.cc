// Peer death: each peer's pidfd becomes readable when the process exits,
// whatever killed it. While requests are pending, progress polls them
// all in one syscall, at most every kLivenessPeriodNs.
#include <poll.h>
#include <signal.h>
#include <time.h>

#include <cerrno>
#include <cstdio>
#include <vector>

#include "context.h"

namespace smd_shm {

constexpr uint64_t kLivenessPeriodNs = 50'000'000;

static uint64_t coarse_now_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

static bool exited(Endpoint *ep, short revents) {
  if (ep->pidfd >= 0) return (revents & (POLLIN | POLLHUP | POLLERR)) != 0;
  return kill(ep->pid, 0) != 0 && errno == ESRCH;
}

void peer_died(Context *ctx, Endpoint *ep, const char *how) {
  if (ep->dead) return;
  // Deliver what the peer managed to send first: its eager messages and
  // acknowledgements are already in our memory.
  recv_drain(ctx, ep);
  ep->dead = true;
  char text[160];
  snprintf(text, sizeof text, "shm peer rank %d (pid %d) %s", ep->peer, int(ep->pid), how);
  ep->death = text;
  log_line(ctx, SMD_TRANSPORT_LOG_WARN, "%s", text);
  while (Request *r = ep->pending.head) {
    request_unlink(ctx, r);
    r->error = ep->death;
    request_complete(ctx, r, SMD_TRANSPORT_ERR_PEER, 0);
  }
  ep->queue.clear();
  ep->streams.clear();
}

void liveness_tick(Context *ctx) {
  if (ctx->unfinished == 0) return;
  uint64_t now = coarse_now_ns();
  if (now < ctx->next_liveness_ns) return;
  ctx->next_liveness_ns = now + kLivenessPeriodNs;
  std::vector<struct pollfd> fds;
  std::vector<Endpoint *> eps;
  for (Endpoint *ep : ctx->endpoints) {
    if (ep->self || ep->dead) continue;
    fds.push_back({ep->pidfd, POLLIN, 0});
    eps.push_back(ep);
  }
  if (eps.empty()) return;
  if (poll(fds.data(), fds.size(), 0) < 0) return;
  for (size_t i = 0; i < eps.size(); ++i)
    if (exited(eps[i], fds[i].revents)) peer_died(ctx, eps[i], "exited");
}

bool liveness_check(Context *ctx, Endpoint *ep) {
  if (ep->dead) return true;
  if (ep->self) return false;
  struct pollfd fd = {ep->pidfd, POLLIN, 0};
  if (poll(&fd, 1, 0) < 0) return false;
  if (!exited(ep, fd.revents)) return false;
  peer_died(ctx, ep, "exited");
  return true;
}

}  // namespace smd_shm
