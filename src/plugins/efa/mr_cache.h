// The registration cache: buffers the core passes without a registration
// are registered here when the provider needs local descriptors
// (FI_MR_LOCAL). Entries cover whole pages and are found by address range;
// an entry in use is never closed, and up to `capacity` unused ones are
// kept, least recently used closed first.
//
// An unused entry assumes its pages stay mapped: memory unmapped and
// mapped again at the same address would keep the old registration (see
// README, SMD_EFA_MR_CACHE=0 turns retention off).
#pragma once

#include <rdma/fabric.h>

#include <cstddef>
#include <cstdint>
#include <map>

namespace smd_efa {

struct MrEntry {
  uintptr_t base = 0;
  size_t len = 0;
  struct fid_mr *mr = nullptr;
  void *desc = nullptr;
  uint32_t refs = 0;
  MrEntry *older = nullptr, *newer = nullptr;  // the idle list
};

class MrCache {
 public:
  // Registers [base, base+len); returns 0 or a negative libfabric error.
  using RegisterFn = int (*)(void *owner, uintptr_t base, size_t len,
                             struct fid_mr **mr);

  MrCache() = default;
  MrCache(const MrCache &) = delete;
  MrCache &operator=(const MrCache &) = delete;
  ~MrCache() { clear(); }

  void configure(size_t capacity, size_t page, void *owner, RegisterFn fn);

  // A referenced entry covering [p, p+n) (n > 0), or nullptr with *err
  // the negative libfabric error of the registration that failed.
  MrEntry *acquire(const void *p, size_t n, int *err);
  // Drops a reference; the entry becomes idle at zero.
  void release(MrEntry *e);
  // Closes every registration, used or not (finalize).
  void clear();

  size_t entries() const { return by_base_.size(); }
  size_t idle() const { return idle_count_; }
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

 private:
  MrEntry *find(uintptr_t lo, uintptr_t hi);
  void idle_push(MrEntry *e);
  void idle_remove(MrEntry *e);
  void close(MrEntry *e);

  std::multimap<uintptr_t, MrEntry *> by_base_;
  MrEntry *newest_ = nullptr, *oldest_ = nullptr;  // idle entries
  size_t idle_count_ = 0;
  size_t capacity_ = 0;
  uintptr_t page_ = 4096;
  void *owner_ = nullptr;
  RegisterFn register_ = nullptr;
  uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace smd_efa
