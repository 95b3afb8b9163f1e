#include "core/plugin/registration_cache.h"

#include <unistd.h>

namespace smd {
namespace {

// How many regions starting at or below an address a lookup inspects:
// overlapping registrations are rare, and a miss only costs a registration.
constexpr int kMaxScan = 16;

}  // namespace

RegistrationCache::RegistrationCache(RegisterFn reg, DeregisterFn dereg, size_t max_idle,
                                     size_t page)
    : register_(std::move(reg)),
      deregister_(std::move(dereg)),
      max_idle_(max_idle),
      page_(page ? page : uintptr_t(sysconf(_SC_PAGESIZE))) {
  unmap_log_attach(&cursor_);
}

RegistrationCache::~RegistrationCache() { clear(); }

bool RegistrationCache::reusable(const Region *r) const {
  return !r->stale && (r->refs > 0 || (r->period != 0 && r->period == unmap_coverage()));
}

// Forget regions whose memory was unmapped since we last looked; if
// reports were lost, none of the regions may be reused.
void RegistrationCache::apply_unmaps() {
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  bool complete = unmap_log_read(&cursor_, &ranges);
  uint64_t period = unmap_coverage();
  if (complete && ranges.empty() && period == seen_period_) return;
  seen_period_ = period;
  std::vector<Region *> gone;
  for (auto &[base, r] : by_base_) {
    bool hit = !complete;
    for (auto &[start, end] : ranges) hit = hit || (r->base < end && start < r->end);
    if (hit) r->stale = true;
    if (r->refs == 0 && !reusable(r)) gone.push_back(r);
  }
  for (Region *r : gone) {
    --idle_;
    remove(r);
  }
}

RegistrationCache::Region *RegistrationCache::acquire(const void *p, size_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  apply_unmaps();
  uintptr_t lo = reinterpret_cast<uintptr_t>(p), hi = lo + n;
  auto it = by_base_.upper_bound(lo);
  for (int i = 0; i < kMaxScan && it != by_base_.begin(); ++i) {
    Region *r = (--it)->second;
    if (r->end < hi || !reusable(r)) continue;
    if (r->refs++ == 0) --idle_;
    r->last_use = ++tick_;
    ++hits_;
    return r;
  }
  ++misses_;
  uintptr_t base = lo & ~(page_ - 1), end = (hi + page_ - 1) & ~(page_ - 1);
  uint64_t period = unmap_coverage();
  void *mr = register_(reinterpret_cast<void *>(base), size_t(end - base));
  auto *r = new Region;
  r->base = base;
  r->end = end;
  r->mr = mr;
  r->refs = 1;
  r->period = period;
  r->last_use = ++tick_;
  by_base_.emplace(base, r);
  return r;
}

void RegistrationCache::release(Region *r) {
  std::lock_guard<std::mutex> lock(mu_);
  if (r->refs == 0 || --r->refs > 0) return;
  if (max_idle_ == 0 || !reusable(r)) {
    remove(r);
    return;
  }
  r->last_use = ++tick_;
  ++idle_;
  trim();
}

void RegistrationCache::trim() {
  while (idle_ > max_idle_) {
    Region *oldest = nullptr;
    for (auto &entry : by_base_) {
      Region *r = entry.second;
      if (r->refs == 0 && (oldest == nullptr || r->last_use < oldest->last_use)) oldest = r;
    }
    if (oldest == nullptr) break;
    --idle_;
    remove(oldest);
  }
}

void RegistrationCache::remove(Region *r) {
  auto [first, last] = by_base_.equal_range(r->base);
  for (auto it = first; it != last; ++it)
    if (it->second == r) {
      by_base_.erase(it);
      break;
    }
  deregister_(r->mr);
  delete r;
}

void RegistrationCache::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto &entry : by_base_) {
    deregister_(entry.second->mr);
    delete entry.second;
  }
  by_base_.clear();
  idle_ = 0;
}

size_t RegistrationCache::regions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return by_base_.size();
}

size_t RegistrationCache::idle() const {
  std::lock_guard<std::mutex> lock(mu_);
  return idle_;
}

}  // namespace smd
