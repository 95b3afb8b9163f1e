#include "core/plugin/unmap_log.h"

#include <atomic>
#include <mutex>

namespace smd {
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

std::mutex g_coverage_mu;
int g_reporters = 0;
uint64_t g_period = 0;
std::atomic<uint64_t> g_current{0};  // g_period while g_reporters > 0, else 0

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

void unmap_log_attach(UnmapCursor *cursor) {
  cursor->seen = g_next.load(std::memory_order_acquire);
}

bool unmap_log_read(UnmapCursor *cursor, std::vector<std::pair<uintptr_t, uintptr_t>> *ranges) {
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

void unmap_coverage_begin() {
  std::lock_guard<std::mutex> lock(g_coverage_mu);
  if (g_reporters++ == 0) g_current.store(++g_period, std::memory_order_release);
}

void unmap_coverage_end() {
  std::lock_guard<std::mutex> lock(g_coverage_mu);
  if (g_reporters > 0 && --g_reporters == 0) g_current.store(0, std::memory_order_release);
}

uint64_t unmap_coverage() { return g_current.load(std::memory_order_acquire); }

}  // namespace smd
