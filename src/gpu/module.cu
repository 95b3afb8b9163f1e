// libsmd-gpu.so's one exported symbol: the table of smd_gpu_kernels.h.
#include <cuda_runtime.h>

#include <atomic>

#include "gpu/launch.cuh"
#include "gpu/reduce_dispatch.h"
#include "gpu/smd_gpu_kernels.h"

#ifndef SMD_GPU_ARCHS
#define SMD_GPU_ARCHS "unknown"
#endif

namespace smd::gpu {

unsigned grid_for(size_t work) {
  // Four resident blocks per multiprocessor keep enough loads in flight to
  // reach memory bandwidth; the count is read once per device.
  constexpr int kMaxDevices = 64;
  static std::atomic<int> sm_count[kMaxDevices];
  int device = 0;
  int sms = 132;
  if (cudaGetDevice(&device) == cudaSuccess && device >= 0 && device < kMaxDevices) {
    int n = sm_count[device].load(std::memory_order_relaxed);
    if (!n && cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device) == cudaSuccess)
      sm_count[device].store(n, std::memory_order_relaxed);
    if (n > 0) sms = n;
  }
  const size_t needed = (work + kThreads - 1) / kThreads;
  const size_t most = size_t(sms) * 4;
  return unsigned(needed < 1 ? 1 : (needed < most ? needed : most));
}

namespace {

int reduce(void *dst, const void *const *srcs, int nsrc, size_t count, int datatype, int op,
           int divisor, void *stream) {
  auto s = static_cast<cudaStream_t>(stream);
  if (datatype >= SMD_FLOAT16 && datatype <= SMD_FLOAT64)
    return reduce_float(dst, srcs, nsrc, count, datatype, op, divisor, s);
  return reduce_int(dst, srcs, nsrc, count, datatype, op, divisor, s);
}

int cast_entry(void *dst, int dst_datatype, const void *src, int src_datatype, size_t count,
               void *stream) {
  return cast(dst, dst_datatype, src, src_datatype, count, static_cast<cudaStream_t>(stream));
}

const char *error_string(int error) { return cudaGetErrorString(static_cast<cudaError_t>(error)); }

const smd_gpu_kernels_v1_t kTable = {
    sizeof(smd_gpu_kernels_v1_t),
    SMD_GPU_KERNELS_ABI,
    SMD_GPU_ARCHS,
    reduce,
    cast_entry,
    error_string,
};

}  // namespace
}  // namespace smd::gpu

extern "C" __attribute__((visibility("default"))) const smd_gpu_kernels_v1_t *smd_gpu_kernels_v1(
    void) {
  return &smd::gpu::kTable;
}
