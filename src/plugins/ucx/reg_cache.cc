#include "reg_cache.h"

namespace smd_ucx {

// How many regions starting at or below an address a lookup inspects:
// overlapping registrations are rare, and a miss only costs a mapping.
constexpr int kMaxScan = 16;

Region *RegCache::acquire(uintptr_t base, uintptr_t end) {
  auto it = by_base_.upper_bound(base);
  for (int i = 0; i < kMaxScan && it != by_base_.begin(); ++i) {
    --it;
    Region *r = it->second;
    if (r->stale || r->end < end) continue;
    if (r->refs++ == 0) --idle_;
    r->last_use = ++tick_;
    return r;
  }
  return nullptr;
}

Region *RegCache::insert(uintptr_t base, uintptr_t end, void *handle) {
  auto *r = new Region;
  r->base = base;
  r->end = end;
  r->handle = handle;
  r->refs = 1;
  r->last_use = ++tick_;
  by_base_.emplace(base, r);
  return r;
}

void RegCache::remove(Region *r, std::vector<Region *> *out) {
  auto [first, last] = by_base_.equal_range(r->base);
  for (auto it = first; it != last; ++it)
    if (it->second == r) {
      by_base_.erase(it);
      break;
    }
  out->push_back(r);
}

void RegCache::trim(std::vector<Region *> *out) {
  while (idle_ > max_idle_) {
    Region *oldest = nullptr;
    for (auto &entry : by_base_) {
      Region *r = entry.second;
      if (r->refs == 0 && (oldest == nullptr || r->last_use < oldest->last_use))
        oldest = r;
    }
    if (oldest == nullptr) break;
    --idle_;
    remove(oldest, out);
  }
}

void RegCache::release(Region *r, std::vector<Region *> *out) {
  if (r->refs == 0 || --r->refs > 0) return;
  if (r->stale || max_idle_ == 0) {
    remove(r, out);
    return;
  }
  r->last_use = ++tick_;
  ++idle_;
  trim(out);
}

void RegCache::invalidate(uintptr_t start, uintptr_t end,
                          std::vector<Region *> *out) {
  std::vector<Region *> gone;
  for (auto &entry : by_base_) {
    Region *r = entry.second;
    if (entry.first >= end) break;
    if (r->end <= start || r->stale) continue;
    r->stale = true;
    if (r->refs == 0) gone.push_back(r);
  }
  for (Region *r : gone) {
    --idle_;
    remove(r, out);
  }
}

void RegCache::drop_idle(std::vector<Region *> *out) {
  std::vector<Region *> gone;
  for (auto &entry : by_base_)
    if (entry.second->refs == 0) gone.push_back(entry.second);
  for (Region *r : gone) remove(r, out);
  idle_ = 0;
}

void RegCache::drop_all(std::vector<Region *> *out) {
  for (auto &entry : by_base_) out->push_back(entry.second);
  by_base_.clear();
  idle_ = 0;
}

}  // namespace smd_ucx
