// The fused reduction kernel: up to SMD_GPU_MAX_INPUTS inputs are read once
// and the output written once, in 16-byte vectors over a grid-stride loop
// where every pointer has the same offset modulo 16 (a scalar head and tail
// cover the rest), element by element otherwise.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpu/element.cuh"
#include "gpu/launch.cuh"
#include "gpu/smd_gpu_kernels.h"

namespace smd::gpu {

struct Inputs {
  const void *p[SMD_GPU_MAX_INPUTS];
};

// Elements [0, head) and [head + nvec * V, count) one at a time; the nvec
// vectors of V elements between them 16 bytes at a time.
template <class E, smd_op_t O>
__global__ void __launch_bounds__(kThreads)
    reduce_kernel(typename E::T *dst, Inputs in, int nsrc, size_t count, size_t head, size_t nvec,
                  Divide<typename E::C> div, bool divide) {
  using T = typename E::T;
  using C = typename E::C;
  constexpr int V = 16 / sizeof(T);
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  const size_t tid = size_t(blockIdx.x) * blockDim.x + threadIdx.x;

  for (size_t v = tid; v < nvec; v += stride) {
    // Every input's vector is loaded before any is combined, so the loads
    // of one thread are all in flight together.
    uint4 raw[SMD_GPU_MAX_INPUTS];
#pragma unroll
    for (int k = 0; k < SMD_GPU_MAX_INPUTS; ++k)
      if (k < nsrc)
        raw[k] = reinterpret_cast<const uint4 *>(static_cast<const T *>(in.p[k]) + head)[v];
    C acc[V];
    const T *first = reinterpret_cast<const T *>(&raw[0]);
#pragma unroll
    for (int j = 0; j < V; ++j) acc[j] = E::load(first[j]);
#pragma unroll
    for (int k = 1; k < SMD_GPU_MAX_INPUTS; ++k) {
      if (k < nsrc) {
        const T *x = reinterpret_cast<const T *>(&raw[k]);
#pragma unroll
        for (int j = 0; j < V; ++j) acc[j] = combine<O>(acc[j], E::load(x[j]));
      }
    }
    uint4 out;
    T *o = reinterpret_cast<T *>(&out);
#pragma unroll
    for (int j = 0; j < V; ++j) o[j] = E::store(divide ? div(acc[j]) : acc[j]);
    reinterpret_cast<uint4 *>(dst + head)[v] = out;
  }

  const size_t body_end = head + nvec * V;
  const size_t scalars = head + (count - body_end);
  for (size_t s = tid; s < scalars; s += stride) {
    const size_t i = s < head ? s : body_end + (s - head);
    C acc = E::load(static_cast<const T *>(in.p[0])[i]);
    for (int k = 1; k < nsrc; ++k)
      acc = combine<O>(acc, E::load(static_cast<const T *>(in.p[k])[i]));
    dst[i] = E::store(divide ? div(acc) : acc);
  }
}

// Enqueues dst = fold(srcs) on stream, SMD_GPU_MAX_INPUTS inputs per launch
// (later launches take the running result as their first input).
template <class E, smd_op_t O>
cudaError_t launch_reduce(void *dst, const void *const *srcs, int nsrc, size_t count, int divisor,
                          cudaStream_t stream) {
  using T = typename E::T;
  using C = typename E::C;
  constexpr size_t V = 16 / sizeof(T);
  if (nsrc < 1 || !dst) return cudaErrorInvalidValue;
  for (int k = 0; k < nsrc; ++k)
    if (!srcs[k] || reinterpret_cast<uintptr_t>(srcs[k]) % sizeof(T)) return cudaErrorInvalidValue;
  if (reinterpret_cast<uintptr_t>(dst) % sizeof(T)) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;

  // In place on an input past the first launch: that input is read in the
  // first launch instead (the first launch overwrites dst), which changes
  // the order floats are added in, not the result's meaning.
  const void *order[256];
  const void *const *src = srcs;
  if (nsrc > SMD_GPU_MAX_INPUTS && nsrc <= 256) {
    for (int k = 0; k < nsrc; ++k) order[k] = srcs[k];
    for (int k = SMD_GPU_MAX_INPUTS; k < nsrc; ++k)
      if (order[k] == dst) {
        order[k] = order[SMD_GPU_MAX_INPUTS - 1];
        order[SMD_GPU_MAX_INPUTS - 1] = dst;
      }
    src = order;
  } else if (nsrc > 256) {
    for (int k = SMD_GPU_MAX_INPUTS; k < nsrc; ++k)
      if (srcs[k] == dst) return cudaErrorInvalidValue;  // too many inputs to reorder here
  }

  int done = 0;
  while (done < nsrc) {
    Inputs in{};
    int n = 0;
    if (done > 0) in.p[n++] = dst;  // the running result
    while (n < SMD_GPU_MAX_INPUTS && done < nsrc) in.p[n++] = src[done++];
    const bool last = done == nsrc;

    // Vectors only when every pointer sits at the same offset modulo 16.
    const uintptr_t offset = reinterpret_cast<uintptr_t>(dst) % 16;
    bool same = true;
    for (int k = 0; k < n; ++k) same = same && reinterpret_cast<uintptr_t>(in.p[k]) % 16 == offset;
    size_t head = count, nvec = 0;
    if (same) {
      head = offset ? (16 - offset) / sizeof(T) : 0;
      if (head > count) head = count;
      nvec = (count - head) / V;
    }
    const size_t work = nvec + (count - nvec * V);
    reduce_kernel<E, O><<<grid_for(work), kThreads, 0, stream>>>(
        static_cast<T *>(dst), in, n, count, head, nvec, Divide<C>(divisor > 1 ? divisor : 1),
        last && divisor > 1);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return err;
  }
  return cudaSuccess;
}

// The four operations of one element kind (SMD_AVG arrives as SUM + divisor).
template <class E>
cudaError_t reduce_any_op(void *dst, const void *const *srcs, int nsrc, size_t count, int op,
                          int divisor, cudaStream_t stream) {
  switch (op) {
    case SMD_SUM: return launch_reduce<E, SMD_SUM>(dst, srcs, nsrc, count, divisor, stream);
    case SMD_PROD: return launch_reduce<E, SMD_PROD>(dst, srcs, nsrc, count, divisor, stream);
    case SMD_MIN: return launch_reduce<E, SMD_MIN>(dst, srcs, nsrc, count, divisor, stream);
    case SMD_MAX: return launch_reduce<E, SMD_MAX>(dst, srcs, nsrc, count, divisor, stream);
    default: return cudaErrorInvalidValue;
  }
}

// A `case` of a datatype switch for the plain element types
// (SMD_INTEGER_DATATYPES, SMD_WIDE_FLOAT_DATATYPES).
#define SMD_GPU_REDUCE_PLAIN(D, Stored) \
  case D: return reduce_any_op<PlainElement<Stored>>(dst, srcs, nsrc, count, op, divisor, stream);

}  // namespace smd::gpu
