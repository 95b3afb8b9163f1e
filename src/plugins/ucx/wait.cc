// Waiting without spinning, for ranks that outnumber the cores: arm the
// worker (UCP_FEATURE_WAKEUP) and sleep in poll() on its event fd, which
// UCX signals when a transport has something (a socket became readable,
// a shared-memory peer rang). Sleeps are sliced so that UCX's keepalive,
// which runs in progress, still notices dead peers. Without an event fd
// the wait gives the core away in short naps.
#include <poll.h>
#include <sched.h>
#include <time.h>

#include "context.h"

namespace smd_ucx {

constexpr int64_t kSliceNs = 50'000'000;
constexpr int64_t kNapNs = 50'000;

static void sleep_on_fd(int fd, int64_t ns) {
  struct pollfd pfd = {fd, POLLIN, 0};
  struct timespec ts = {time_t(ns / 1'000'000'000), long(ns % 1'000'000'000)};
  ppoll(&pfd, 1, &ts, nullptr);
}

static void nap(int64_t ns) {
  struct timespec ts = {0, long(ns)};
  nanosleep(&ts, nullptr);
}

Status wait_for_work(Context *ctx, int64_t timeout_us) {
  uint64_t finished = ctx->completions;
  if (progress(ctx) != 0 || ctx->completions != finished || timeout_us <= 0)
    return SMD_TRANSPORT_OK;
  int64_t deadline = now_ns() + timeout_us * 1000;
  for (;;) {
    int64_t left = deadline - now_ns();
    if (left <= 0) return SMD_TRANSPORT_OK;
    if (ctx->event_fd >= 0) {
      ucs_status_t s = ucp_worker_arm(ctx->worker);
      if (s == UCS_OK) sleep_on_fd(ctx->event_fd, left < kSliceNs ? left : kSliceNs);
      else if (s != UCS_ERR_BUSY)  // cannot arm: nap instead
        nap(left < kNapNs ? left : kNapNs);
    } else {
      sched_yield();
      nap(left < kNapNs ? left : kNapNs);
    }
    if (progress(ctx) != 0 || ctx->completions != finished) return SMD_TRANSPORT_OK;
  }
}

}  // namespace smd_ucx
