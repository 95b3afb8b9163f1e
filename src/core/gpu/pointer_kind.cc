#include "core/gpu/pointer_kind.h"

#include "core/gpu/cuda_api.h"

namespace smd::gpu {

const char *pointer_kind_name(PointerKind kind) {
  switch (kind) {
    case PointerKind::kHost: return "host";
    case PointerKind::kPinnedHost: return "pinned host";
    case PointerKind::kDevice: return "device";
    case PointerKind::kManaged: return "managed";
  }
  return "unknown";
}

PointerInfo PointerClassifier::classify(const void *p) {
  const auto addr = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(mu_);
  for (const Entry &e : entries_)
    if (addr >= e.lo && addr < e.hi) return e.info;
  ++queries_;
  PointerInfo info;
  if (!oracle_.query(p, &info)) return PointerInfo{};  // CUDA cannot say: host, not cached
  uintptr_t base = addr;
  size_t size = 1;
  if (info.kind != PointerKind::kHost && oracle_.range && oracle_.range(p, &base, &size) &&
      addr >= base && addr - base < size) {
    info.base = base;
    info.size = size;
  } else {
    base = addr;
    size = 1;
    info.base = addr;
    info.size = 0;
  }
  entries_[next_] = Entry{base, base + size, info};
  next_ = (next_ + 1) % kEntries;
  return info;
}

namespace {

bool cuda_query(const void *p, PointerInfo *info) {
  const CudaApi *a = cuda_api();
  if (!a) return false;
  CudaPointerAttributes attr{};
  if (a->PointerGetAttributes(&attr, p) != 0) {
    a->GetLastError();  // not sticky; keep it from surfacing in the caller's next call
    return false;
  }
  switch (attr.type) {
    case 1: info->kind = PointerKind::kPinnedHost; break;
    case 2: info->kind = PointerKind::kDevice; break;
    case 3: info->kind = PointerKind::kManaged; break;
    default: info->kind = PointerKind::kHost; break;
  }
  info->device = attr.type >= 1 ? attr.device : -1;
  return true;
}

bool cuda_range(const void *p, uintptr_t *base, size_t *size) {
  const CudaApi *a = cuda_api();
  if (!a || !a->cuMemGetAddressRange) return false;
  return a->cuMemGetAddressRange(base, size, reinterpret_cast<uintptr_t>(p)) == 0;
}

}  // namespace

PointerInfo classify_pointer(const void *p) {
  if (!p || !cuda_active()) return PointerInfo{};
  static PointerClassifier classifier(PointerOracle{cuda_query, cuda_range});
  return classifier.classify(p);
}

}  // namespace smd::gpu
