// What the GPU tests and the kernel benchmark share: device buffers through
// smd's own CUDA loader (no CUDA header needed to build them), and the
// skip rule: without a usable device they print why and exit 77, which
// meson counts as a skipped test.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/gpu/cuda_api.h"
#include "core/gpu/kernel_module.h"

namespace smd::gpu::testing {

// The runtime and the kernel module, or exit 77 naming what is missing.
inline const CudaApi &require_device(const char *program) {
  const CudaApi *a = cuda_api();
  if (!a || cuda_status().devices == 0) {
    printf("SKIP %s: %s\n", program, cuda_status().reason.c_str());
    exit(77);
  }
  if (!kernel_module().table) {
    printf("SKIP %s: %s\n", program, kernel_module().reason.c_str());
    exit(77);
  }
  return *a;
}

inline void check(const char *call, int err) {
  if (err != 0) {
    fprintf(stderr, "FATAL %s\n", cuda_error_text(call, err).c_str());
    exit(1);
  }
}

class DeviceBuffer {
 public:
  DeviceBuffer(const CudaApi &a, size_t bytes) : a_(a) {
    check("cudaMalloc", a.Malloc(&p_, bytes ? bytes : 1));
  }
  ~DeviceBuffer() { a_.Free(p_); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  unsigned char *data() const { return static_cast<unsigned char *>(p_); }
  void upload(size_t offset, const void *src, size_t bytes) const {
    check("cudaMemcpyAsync",
          a_.MemcpyAsync(data() + offset, src, bytes, kCudaMemcpyDefault, nullptr));
    check("cudaStreamSynchronize", a_.StreamSynchronize(nullptr));
  }
  void download(void *dst, size_t offset, size_t bytes) const {
    check("cudaMemcpyAsync",
          a_.MemcpyAsync(dst, data() + offset, bytes, kCudaMemcpyDefault, nullptr));
    check("cudaStreamSynchronize", a_.StreamSynchronize(nullptr));
  }

 private:
  const CudaApi &a_;
  void *p_ = nullptr;
};

}  // namespace smd::gpu::testing
