// float32 <-> float16/bfloat16 conversions (compression on the wire),
// rounding to nearest even like the host's src/core/reduce/half.h.
#include <cstdint>

#include "gpu/element.cuh"
#include "gpu/launch.cuh"
#include "gpu/reduce_dispatch.h"

namespace smd::gpu {
namespace {

template <class E>
__global__ void __launch_bounds__(kThreads)
    narrow_kernel(uint16_t *dst, const float *src, size_t n) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    dst[i] = E::store(src[i]);
}

template <class E>
__global__ void __launch_bounds__(kThreads)
    widen_kernel(float *dst, const uint16_t *src, size_t n) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    dst[i] = E::load(src[i]);
}

bool aligned(const void *p, size_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; }

}  // namespace

cudaError_t cast(void *dst, int dst_datatype, const void *src, int src_datatype, size_t count,
                 cudaStream_t stream) {
  if (!dst || !src) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  const unsigned grid = grid_for(count);
  const bool narrow =
      src_datatype == SMD_FLOAT32 && (dst_datatype == SMD_FLOAT16 || dst_datatype == SMD_BFLOAT16);
  const bool widen =
      dst_datatype == SMD_FLOAT32 && (src_datatype == SMD_FLOAT16 || src_datatype == SMD_BFLOAT16);
  if (!narrow && !widen) return cudaErrorInvalidValue;
  if (!aligned(narrow ? src : dst, 4) || !aligned(narrow ? dst : src, 2))
    return cudaErrorInvalidValue;
  const bool half = (narrow ? dst_datatype : src_datatype) == SMD_FLOAT16;
  if (narrow) {
    auto *out = static_cast<uint16_t *>(dst);
    auto *in = static_cast<const float *>(src);
    if (half) narrow_kernel<HalfElement><<<grid, kThreads, 0, stream>>>(out, in, count);
    else narrow_kernel<Bfloat16Element><<<grid, kThreads, 0, stream>>>(out, in, count);
  } else {
    auto *out = static_cast<float *>(dst);
    auto *in = static_cast<const uint16_t *>(src);
    if (half) widen_kernel<HalfElement><<<grid, kThreads, 0, stream>>>(out, in, count);
    else widen_kernel<Bfloat16Element><<<grid, kThreads, 0, stream>>>(out, in, count);
  }
  return cudaGetLastError();
}

}  // namespace smd::gpu
