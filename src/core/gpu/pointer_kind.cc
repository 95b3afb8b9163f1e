#include "core/gpu/pointer_kind.h"

#include "core/gpu/cuda_api.h"
#include "core/util/error.h"

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
  if (const int error = oracle_.query(p, &info)) {
    PointerInfo refused;  // not cached: the range may become valid again
    refused.cuda_error = error;
    return refused;
  }
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

int cuda_query(const void *p, PointerInfo *info) {
  const CudaApi *a = cuda_api();
  if (!a) return 0;  // not reached: classify_pointer asks only when CUDA is active
  CudaPointerAttributes attr{};
  if (const int error = a->PointerGetAttributes(&attr, p)) {
    a->GetLastError();  // not sticky; keep it from surfacing in the caller's next call
    return error;
  }
  switch (attr.type) {
    case 1: info->kind = PointerKind::kPinnedHost; break;
    case 2: info->kind = PointerKind::kDevice; break;
    case 3: info->kind = PointerKind::kManaged; break;
    default: info->kind = PointerKind::kHost; break;
  }
  info->device = attr.type >= 1 ? attr.device : -1;
  return 0;
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

void require_known(const PointerInfo &info, const void *p, const char *name) {
  if (info.cuda_error)
    fail(SMD_ERR_INVALID_ARGUMENT,
         "%s (%p) is memory CUDA does not know (%s): freed device memory, or a pointer into no "
         "allocation",
         name, p, cuda_error_text("cudaPointerGetAttributes", info.cuda_error).c_str());
}

}  // namespace smd::gpu
