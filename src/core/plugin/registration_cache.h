// The core's one registration cache: memory registered with a plugin
// (mem_register over whole pages), found by address range, so a buffer
// inside a registered region costs a lookup instead of a registration.
// A region lives while requests use it. Released regions stay, idle, up
// to a limit (least recently used out first), but only while the unmap
// log covers them (unmap_log.h): a region is never reused after its
// memory was reported unmapped, nor outside the coverage period it was
// registered in; without a plugin that reports unmaps, released regions
// are deregistered at once and the cache only shares regions between
// requests in flight.
//
// Thread-safe. The register/deregister functions are called with the
// cache's lock held; they must not call back into the cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include "core/plugin/unmap_log.h"

namespace smd {

class RegistrationCache {
 public:
  struct Region {
    uintptr_t base = 0, end = 0;  // [base, end), page aligned
    void *mr = nullptr;           // the plugin's registration
    uint32_t refs = 0;
    bool stale = false;   // its memory went away: never reused
    uint64_t period = 0;  // unmap coverage when registered (0: none)
    uint64_t last_use = 0;
  };
  // Registers [base, base+len) and returns the handle; throws on failure.
  using RegisterFn = std::function<void *(void *base, size_t len)>;
  // Releases a handle; must not throw.
  using DeregisterFn = std::function<void(void *mr)>;

  RegistrationCache(RegisterFn reg, DeregisterFn dereg, size_t max_idle, size_t page = 0);
  ~RegistrationCache();  // deregisters every region
  RegistrationCache(const RegistrationCache &) = delete;
  RegistrationCache &operator=(const RegistrationCache &) = delete;

  // A region covering [p, p+n) (n > 0) with one more reference,
  // registered now if no usable region covers it.
  Region *acquire(const void *p, size_t n);
  // Drops the reference acquire() gave.
  void release(Region *r);
  // Deregisters every region, used or not (before the plugin finalizes).
  void clear();

  size_t regions() const;
  size_t idle() const;
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

 private:
  bool reusable(const Region *r) const;
  void apply_unmaps();
  void remove(Region *r);
  void trim();

  RegisterFn register_;
  DeregisterFn deregister_;
  size_t max_idle_;
  uintptr_t page_;
  mutable std::mutex mu_;
  std::multimap<uintptr_t, Region *> by_base_;  // several may share a base
  size_t idle_ = 0;
  uint64_t tick_ = 0;
  uint64_t hits_ = 0, misses_ = 0;
  UnmapCursor cursor_;
  uint64_t seen_period_ = 0;  // the coverage apply_unmaps last saw
};

}  // namespace smd
