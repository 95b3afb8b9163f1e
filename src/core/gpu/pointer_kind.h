// Which memory a buffer lies in, as CUDA sees it, with a cache so a training
// loop that passes the same buffers again pays a short scan, not a CUDA
// call. In a process that does not use CUDA (cuda_active() false) every
// pointer is host memory and nothing is asked or cached.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>

namespace smd::gpu {

enum class PointerKind : int {
  kHost = 0,    // ordinary (unregistered) host memory
  kPinnedHost,  // cudaMallocHost / cudaHostRegister: host memory the GPU can reach
  kDevice,      // cudaMalloc
  kManaged,     // cudaMallocManaged
};

const char *pointer_kind_name(PointerKind kind);
// Device and managed memory are used through the device data path.
inline bool on_device(PointerKind k) {
  return k == PointerKind::kDevice || k == PointerKind::kManaged;
}

struct PointerInfo {
  PointerKind kind = PointerKind::kHost;
  int device = -1;  // the owning GPU of device and managed memory
  // The allocation holding the pointer when known (device, managed and
  // pinned memory); for plain host memory just the pointer itself.
  uintptr_t base = 0;
  size_t size = 0;
  // CUDA's error when it refused to classify the pointer (freed device
  // memory, for one: CUDA 11 and later answer host memory with success),
  // 0 otherwise. Such a buffer is unusable: callers report it.
  int cuda_error = 0;
};

// The questions asked of CUDA, replaceable for tests. query fills kind and
// device and returns 0, or CUDA's error; range gives the allocation's
// extent and returns false when unknown.
struct PointerOracle {
  int (*query)(const void *p, PointerInfo *info);
  bool (*range)(const void *p, uintptr_t *base, size_t *size);
};

// A fixed-size cache of allocations already classified (replaced round
// robin). Thread-safe. A freed and reallocated range may be answered from
// the cache until its entry is replaced; CUDA then fails on it and the
// caller reports that error.
class PointerClassifier {
 public:
  static constexpr int kEntries = 32;
  explicit PointerClassifier(PointerOracle oracle) : oracle_(oracle) {}
  PointerInfo classify(const void *p);
  uint64_t queries() const { return queries_; }  // oracle calls so far

 private:
  struct Entry {
    uintptr_t lo = 0, hi = 0;  // [lo, hi); empty when lo == hi
    PointerInfo info;
  };
  PointerOracle oracle_;
  std::mutex mu_;
  Entry entries_[kEntries];
  int next_ = 0;
  uint64_t queries_ = 0;
};

// The process's classifier over the loaded CUDA runtime: kHost without a
// query when CUDA is not active; cuda_error set when CUDA refused.
PointerInfo classify_pointer(const void *p);

// Throws SMD_ERR_INVALID_ARGUMENT naming the buffer and CUDA's answer when
// `info` carries a CUDA error.
void require_known(const PointerInfo &info, const void *p, const char *name);

}  // namespace smd::gpu
