// Blocking without spinning. The owner of a region announces that it will
// sleep (`sleeping`), re-checks its rings, and sleeps on the `doorbell`
// futex; whoever publishes cells for it, or frees room it waits for,
// rings the bell only when `sleeping` says so. Both sides put a full
// fence between their store and their load, so at least one sees the
// other: no lost wake-up, and no syscall on the fast path.
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

#include "context.h"
#include "ring_producer.h"

namespace smd_shm {

// Before sleeping, spin for this long giving the core to other ranks:
// a kernel wake-up costs tens of microseconds on a busy machine.
constexpr int64_t kYieldPhaseUs = 50;
// Sleep in slices this long so peer death is still noticed.
constexpr int64_t kSleepSliceUs = 50'000;

static int64_t now_us() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
}

void doorbell_ring(RegionHeader *hdr) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (load_relaxed(hdr->sleeping) == 0) return;
  std::atomic_ref<uint32_t>(hdr->doorbell).fetch_add(1);
  syscall(SYS_futex, &hdr->doorbell, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

static bool has_work(Context *ctx) {
  if (!ctx->copies.empty()) return true;
  for (Endpoint *ep : ctx->senders)
    if (send_can_advance(ep)) return true;
  for (Endpoint *ep : ctx->endpoints)
    if (recv_ring_nonempty(ep)) return true;
  return false;
}

// One futex sleep of at most slice_us; returns early when the bell rings.
static void sleep_once(Context *ctx, int64_t slice_us) {
  // Ask consumers of rings we are blocked on to ring our bell.
  for (Endpoint *ep : ctx->senders)
    if (!ep->dead) store_relaxed(ep->out->producer_waiting, 1u);
  RegionHeader *h = ctx->hdr;
  store_relaxed(h->sleeping, 1u);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  uint32_t seen = std::atomic_ref<uint32_t>(h->doorbell).load();
  if (!has_work(ctx)) {
    struct timespec ts = {time_t(slice_us / 1'000'000), long(slice_us % 1'000'000) * 1000};
    syscall(SYS_futex, &h->doorbell, FUTEX_WAIT, seen, &ts, nullptr, 0);
  }
  store_relaxed(h->sleeping, 0u);
}

Status wait_for_work(Context *ctx, int64_t timeout_us) {
  uint64_t events = ctx->events;
  progress(ctx);
  if (ctx->events != events || timeout_us <= 0 || has_work(ctx)) return SMD_TRANSPORT_OK;
  int64_t start = now_us();
  int64_t deadline = start + timeout_us;
  int64_t yield_until = start + (timeout_us < kYieldPhaseUs ? timeout_us : kYieldPhaseUs);
  for (int64_t now = start; now < yield_until; now = now_us()) {
    sched_yield();
    progress(ctx);
    if (ctx->events != events) return SMD_TRANSPORT_OK;
  }
  for (int64_t now = now_us(); now < deadline; now = now_us()) {
    int64_t left = deadline - now;
    sleep_once(ctx, left < kSleepSliceUs ? left : kSleepSliceUs);
    progress(ctx);
    if (ctx->events != events) return SMD_TRANSPORT_OK;
  }
  return SMD_TRANSPORT_OK;
}

}  // namespace smd_shm
