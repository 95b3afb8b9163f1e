#include "unmap_log.h"

#include <ucm/api/ucm.h>

#include <atomic>
#include <mutex>

namespace smd_ucx {

namespace {

// Each slot is a small seqlock: `seq` is 2n+1 while entry n is written
// and 2n+2 once it is complete, so a reader can tell a finished entry
// from one being written or already overwritten.
struct Slot {
  std::atomic<uint64_t> seq{0};
  std::atomic<uintptr_t> start{0};
  std::atomic<uintptr_t> end{0};
};

constexpr uint64_t kSlots = 512;
Slot g_slots[kSlots];
std::atomic<uint64_t> g_next{0};

std::mutex g_install_mu;
int g_users = 0;
bool g_installed = false;

// UCX's registration cache uses 1000 too; the order among handlers of a
// "pre" event does not matter to us.
constexpr int kHandlerPriority = 1000;

void on_unmapped(ucm_event_type_t type, ucm_event_t *event, void *) {
  if (type != UCM_EVENT_VM_UNMAPPED) return;
  auto start = reinterpret_cast<uintptr_t>(event->vm_unmapped.address);
  unmap_log_note(start, start + event->vm_unmapped.size);
}

}  // namespace

void unmap_log_note(uintptr_t start, uintptr_t end) {
  uint64_t n = g_next.fetch_add(1, std::memory_order_acq_rel);
  Slot &s = g_slots[n % kSlots];
  s.seq.store(2 * n + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  s.start.store(start, std::memory_order_relaxed);
  s.end.store(end, std::memory_order_relaxed);
  s.seq.store(2 * n + 2, std::memory_order_release);
}

bool unmap_log_attach(UnmapCursor *cursor) {
  std::lock_guard<std::mutex> lock(g_install_mu);
  if (g_users == 0) {
    ucs_status_t s = ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED,
                                           kHandlerPriority, on_unmapped, nullptr);
    if (s == UCS_OK && ucm_test_events(UCM_EVENT_VM_UNMAPPED) != UCS_OK) {
      ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, on_unmapped, nullptr);
      s = UCS_ERR_UNSUPPORTED;
    }
    if (s != UCS_OK) return false;
    g_installed = true;
  }
  ++g_users;
  cursor->seen = g_next.load(std::memory_order_acquire);
  return true;
}

void unmap_log_detach() {
  std::lock_guard<std::mutex> lock(g_install_mu);
  if (g_users == 0 || --g_users > 0) return;
  if (g_installed)
    ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, on_unmapped, nullptr);
  g_installed = false;
}

bool unmap_log_read(UnmapCursor *cursor,
                    std::vector<std::pair<uintptr_t, uintptr_t>> *ranges) {
  uint64_t now = g_next.load(std::memory_order_acquire);
  uint64_t from = cursor->seen;
  cursor->seen = now;
  if (now - from > kSlots) return false;
  for (uint64_t i = from; i < now; ++i) {
    Slot &s = g_slots[i % kSlots];
    uint64_t before = s.seq.load(std::memory_order_acquire);
    if (before != 2 * i + 2) return false;
    uintptr_t start = s.start.load(std::memory_order_relaxed);
    uintptr_t end = s.end.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (s.seq.load(std::memory_order_relaxed) != before) return false;
    ranges->emplace_back(start, end);
  }
  return true;
}

}  // namespace smd_ucx
