// How each datatype is stored and computed on the device. The combine step
// and the finishing division are the host kernels' own
// (src/core/reduce/element.h), so both give the same bits for the same
// inputs in the same order.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "core/reduce/element.h"

namespace smd::gpu {

template <class Stored, class Computed = Stored>
struct PlainElement {
  using T = Stored;
  using C = Computed;
  __device__ static C load(T x) { return x; }
  __device__ static T store(C c) { return c; }
};

// Both 16-bit floats are stored as raw bits and computed in float32,
// rounded to nearest even once per output element.
struct HalfElement {
  using T = uint16_t;
  using C = float;
  __device__ static C load(T x) { return __half2float(__ushort_as_half(x)); }
  __device__ static T store(C c) { return __half_as_ushort(__float2half_rn(c)); }
};

struct Bfloat16Element {
  using T = uint16_t;
  using C = float;
  __device__ static C load(T x) { return __bfloat162float(__ushort_as_bfloat16(x)); }
  __device__ static T store(C c) { return __bfloat16_as_ushort(__float2bfloat16_rn(c)); }
};

using reduce::combine;
using reduce::Divide;

}  // namespace smd::gpu
