#include "mr_cache.h"

#include <rdma/fi_domain.h>


namespace smd_efa {

// Entries that start below a buffer are looked at, nearest first, up to
// this many: a covering entry further away is missed (and the buffer
// registered again), which costs a registration, never correctness.
constexpr int kLookBack = 8;

void MrCache::configure(size_t capacity, size_t page, void *owner,
                        RegisterFn fn) {
  capacity_ = capacity;
  page_ = page != 0 ? page : 4096;
  owner_ = owner;
  register_ = fn;
}

MrEntry *MrCache::find(uintptr_t lo, uintptr_t hi) {
  auto it = by_base_.upper_bound(lo);
  for (int i = 0; i < kLookBack && it != by_base_.begin(); ++i) {
    --it;
    MrEntry *e = it->second;
    if (e->base <= lo && e->base + e->len >= hi) return e;
  }
  return nullptr;
}

MrEntry *MrCache::acquire(const void *p, size_t n, int *err) {
  uintptr_t lo = reinterpret_cast<uintptr_t>(p);
  uintptr_t hi = lo + n;
  if (MrEntry *e = find(lo, hi)) {
    ++hits_;
    if (e->refs++ == 0) idle_remove(e);
    return e;
  }
  ++misses_;
  uintptr_t base = lo & ~(page_ - 1);
  uintptr_t end = (hi + page_ - 1) & ~(page_ - 1);
  struct fid_mr *mr = nullptr;
  int rc = register_(owner_, base, size_t(end - base), &mr);
  if (rc != 0) {
    *err = rc;
    return nullptr;
  }
  auto *e = new MrEntry;
  e->base = base;
  e->len = size_t(end - base);
  e->mr = mr;
  e->desc = fi_mr_desc(mr);
  e->refs = 1;
  by_base_.emplace(base, e);
  return e;
}

void MrCache::release(MrEntry *e) {
  if (--e->refs != 0) return;
  idle_push(e);
  while (idle_count_ > capacity_) {
    MrEntry *victim = oldest_;
    idle_remove(victim);
    close(victim);
  }
}

void MrCache::clear() {
  for (auto &[base, e] : by_base_) {
    if (e->mr != nullptr) fi_close(&e->mr->fid);
    delete e;
  }
  by_base_.clear();
  newest_ = oldest_ = nullptr;
  idle_count_ = 0;
}

void MrCache::idle_push(MrEntry *e) {
  e->older = newest_;
  e->newer = nullptr;
  if (newest_ != nullptr) newest_->newer = e;
  newest_ = e;
  if (oldest_ == nullptr) oldest_ = e;
  ++idle_count_;
}

void MrCache::idle_remove(MrEntry *e) {
  if (e->newer != nullptr) e->newer->older = e->older;
  else newest_ = e->older;
  if (e->older != nullptr) e->older->newer = e->newer;
  else oldest_ = e->newer;
  e->older = e->newer = nullptr;
  --idle_count_;
}

void MrCache::close(MrEntry *e) {
  auto range = by_base_.equal_range(e->base);
  for (auto it = range.first; it != range.second; ++it)
    if (it->second == e) {
      by_base_.erase(it);
      break;
    }
  if (e->mr != nullptr) fi_close(&e->mr->fid);
  delete e;
}

}  // namespace smd_efa
