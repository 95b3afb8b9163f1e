// The memory the supervisor and its workers share: created (MAP_SHARED |
// MAP_ANONYMOUS) before fork, so every process sees the same bytes. It
// carries the address exchange, barriers, small blobs a test publishes,
// and each rank's result for each test.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace tcheck {

constexpr int kMaxRanks = 64;
constexpr int kMaxTests = 32;
constexpr int kMaxBarriers = 256;  // per test
// Network libraries have addresses and remote keys of a few KiB.
constexpr size_t kMaxAddress = 16384;
constexpr size_t kMaxBlob = 16384;
constexpr size_t kMessageSize = 1024;

// kIdle: not started yet; kNotRun: decided not to run (final).
enum ResultState : int { kIdle = 0, kRunning, kPass, kFail, kSkip, kNotRun };

struct Result {
  std::atomic<int> state;
  double start;  // monotonic seconds
  double end;
  char message[kMessageSize];  // failure, skip reason or notes
};

struct Arena {
  int nranks;
  std::atomic<int> live;                  // ranks that take part in barriers
  std::atomic<int> departed[kMaxRanks];   // left on purpose (peer_death)
  std::atomic<int> finished[kMaxRanks];   // ran its whole plan
  std::atomic<int> failed_by[kMaxTests];  // 1 + first rank that failed
  std::atomic<int> barrier[kMaxTests][kMaxBarriers];
  std::atomic<int> end_barrier[kMaxTests];
  uint32_t address_len[kMaxRanks];
  unsigned char address[kMaxRanks][kMaxAddress];
  uint32_t blob_len[kMaxRanks];
  unsigned char blob[kMaxRanks][kMaxBlob];
  Result results[kMaxTests][kMaxRanks];
};

// A zeroed arena for n ranks, shared with children forked later.
Arena *arena_create(int nranks);
void arena_destroy(Arena *a);

double now_seconds();

}  // namespace tcheck
