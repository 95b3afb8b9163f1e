#include "arena.h"

#include <sys/mman.h>
#include <time.h>

#include <new>

namespace tcheck {

Arena *arena_create(int nranks) {
  void *p = mmap(nullptr, sizeof(Arena), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  auto *a = new (p) Arena();
  a->nranks = nranks;
  a->live.store(nranks);
  return a;
}

void arena_destroy(Arena *a) {
  a->~Arena();
  munmap(a, sizeof(Arena));
}

double now_seconds() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

}  // namespace tcheck
