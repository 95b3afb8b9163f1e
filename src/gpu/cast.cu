// float32 <-> float16/bfloat16 conversions (compression on the wire),
// rounding to nearest even like the host's src/core/reduce/half.h.
#include <cstdint>

#include "gpu/element.cuh"
#include "gpu/launch.cuh"
#include "gpu/reduce_dispatch.h"

namespace smd::gpu {
namespace {

// The two directions of element type E's conversion: float32 to E's
// 16-bit storage (narrow) and back (widen).
template <class E>
struct Narrow {
  using From = float;
  using To = uint16_t;
  static __device__ To apply(From x) { return E::store(x); }
};
template <class E>
struct Widen {
  using From = uint16_t;
  using To = float;
  static __device__ To apply(From x) { return E::load(x); }
};

template <class Conversion>
__global__ void __launch_bounds__(kThreads)
    convert_kernel(typename Conversion::To *dst, const typename Conversion::From *src, size_t n) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    dst[i] = Conversion::apply(src[i]);
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
    if (half) convert_kernel<Narrow<HalfElement>><<<grid, kThreads, 0, stream>>>(out, in, count);
    else convert_kernel<Narrow<Bfloat16Element>><<<grid, kThreads, 0, stream>>>(out, in, count);
  } else {
    auto *out = static_cast<float *>(dst);
    auto *in = static_cast<const uint16_t *>(src);
    if (half) convert_kernel<Widen<HalfElement>><<<grid, kThreads, 0, stream>>>(out, in, count);
    else convert_kernel<Widen<Bfloat16Element>><<<grid, kThreads, 0, stream>>>(out, in, count);
  }
  return cudaGetLastError();
}

}  // namespace smd::gpu
