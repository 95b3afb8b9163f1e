// The registration cache: memory regions registered with UCX, keyed by
// address range, so that registering a buffer that an existing region
// covers costs a lookup instead of a ucp_mem_map. A region lives while
// registrations refer to it; released regions stay (idle) up to a limit,
// least recently used first out, until the memory under them is unmapped.
// Pure bookkeeping: the caller maps and unmaps, the cache only says which
// region to reuse and which to unmap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace smd_ucx {

struct Region {
  uintptr_t base = 0, end = 0;  // [base, end), page aligned
  void *handle = nullptr;       // the ucp_mem_h
  uint32_t refs = 0;
  bool stale = false;           // its memory went away: never reused
  uint64_t last_use = 0;
  std::vector<unsigned char> packed;  // its remote key, packed on demand
};

class RegCache {
 public:
  explicit RegCache(size_t max_idle = 64) : max_idle_(max_idle) {}
  RegCache(const RegCache &) = delete;
  RegCache &operator=(const RegCache &) = delete;

  void set_max_idle(size_t n) { max_idle_ = n; }
  size_t max_idle() const { return max_idle_; }

  // A region covering [base, end) with one more reference, or nullptr.
  Region *acquire(uintptr_t base, uintptr_t end);
  // A new region with one reference.
  Region *insert(uintptr_t base, uintptr_t end, void *handle);
  // Drops one reference. Regions to unmap now (this one, or idle ones
  // pushed out by it) leave the cache and are appended to *out; the
  // caller unmaps and deletes them.
  void release(Region *r, std::vector<Region *> *out);
  // The pages of [start, end) are going away: overlapping regions are
  // never reused, and the idle ones leave the cache now.
  void invalidate(uintptr_t start, uintptr_t end, std::vector<Region *> *out);
  // Every idle region leaves the cache.
  void drop_idle(std::vector<Region *> *out);
  // Every region, idle or not (finalize).
  void drop_all(std::vector<Region *> *out);

  size_t size() const { return by_base_.size(); }
  size_t idle() const { return idle_; }

 private:
  void remove(Region *r, std::vector<Region *> *out);
  void trim(std::vector<Region *> *out);

  std::multimap<uintptr_t, Region *> by_base_;  // several may share a base
  size_t max_idle_;
  size_t idle_ = 0;
  uint64_t tick_ = 0;
};

}  // namespace smd_ucx
