// AVX2 + F16C reduction kernels. One loop serves every datatype and
// operation: it keeps kUnroll vectors of the output in registers, folds
// each input into them in turn and stores once, so any number of inputs
// costs one read of each and one write of the output; past the last-level
// cache the output goes out with streaming stores. The per-datatype part
// is only how a vector is loaded, narrowed and combined (the *Lanes
// structs below). No fused multiply-add is used (nothing here multiplies
// and adds, and fusing would round differently from the portable kernels);
// FMA is in the target set because every AVX2 CPU has it.
#if defined(__x86_64__) || defined(__i386__)

#include "core/reduce/element.h"
#include "core/reduce/kernels.h"
#include "core/reduce/reduce.h"

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

// Everything defined below is compiled for AVX2/F16C/FMA, with no special
// compiler flags; the dispatcher only calls it on CPUs that have them.
// The headers come first so that their inline functions stay baseline code:
// the linker may keep this file's copy of one for the whole program.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,f16c,fma"))), apply_to = function)
#else
#pragma GCC target("avx2,f16c,fma")
#endif

namespace smd::reduce {
namespace {

// Storing a vector register, normally or streaming (non-temporal: around
// the caches, no read-for-ownership; `p` must then be 16/32-byte aligned).
#define SMD_PUT(V, Element, stream, store)                      \
  template <bool Stream>                                        \
  void put(void *p, V v) {                                      \
    if constexpr (Stream) stream(static_cast<Element *>(p), v); \
    else store(static_cast<Element *>(p), v);                   \
  }
SMD_PUT(__m256, float, _mm256_stream_ps, _mm256_storeu_ps)
SMD_PUT(__m256d, double, _mm256_stream_pd, _mm256_storeu_pd)
SMD_PUT(__m256i, __m256i, _mm256_stream_si256, _mm256_storeu_si256)
SMD_PUT(__m128i, __m128i, _mm_stream_si128, _mm_storeu_si128)
#undef SMD_PUT

// The float32 and float64 operations (float16 and bfloat16 are widened to
// float32 when loaded): add and multiply are vaddps/vmulps (pd), and
// vminps/vmaxps(acc, x) are exactly element.h's combine().
inline __m256 splat(float x) { return _mm256_set1_ps(x); }
inline __m256d splat(double x) { return _mm256_set1_pd(x); }
inline __m256 lane_min(__m256 a, __m256 b) { return _mm256_min_ps(a, b); }
inline __m256d lane_min(__m256d a, __m256d b) { return _mm256_min_pd(a, b); }
inline __m256 lane_max(__m256 a, __m256 b) { return _mm256_max_ps(a, b); }
inline __m256d lane_max(__m256d a, __m256d b) { return _mm256_max_pd(a, b); }

template <class Float>
struct FloatOps {
  using V = decltype(splat(Float{}));
  static constexpr size_t W = sizeof(V) / sizeof(Float);
  static V add(V a, V b) { return a + b; }
  static V mul(V a, V b) { return a * b; }
  static V min(V a, V b) { return lane_min(a, b); }
  static V max(V a, V b) { return lane_max(a, b); }
  static V divide(V a, const Divide<Float> &d) { return a * splat(d.inverse); }
};
using Float32Ops = FloatOps<float>;

struct Float32Lanes : Float32Ops {
  using T = float;
  static V load(const T *p) { return _mm256_loadu_ps(p); }
  static V narrow(V v) { return v; }
};

struct Float16Lanes : Float32Ops {
  using T = uint16_t;
  static V load(const T *p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
  }
  static __m128i narrow(V v) {
    return _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
};

// bfloat16 is the top half of a float32. A 32-byte load of 16 elements is
// split into two float32 vectors without any shuffle: the even elements
// (low half of each 32-bit lane) shifted up, the odd ones (already in the
// high half) with their neighbour masked off. Narrowing rounds in place
// (as half.h's float_to_bfloat16) and blends the halves back together.
struct Bfloat16Lanes {
  using T = uint16_t;
  struct V {
    __m256 lo, hi;  // even, odd elements
  };
  static constexpr size_t W = 16;
  using F = Float32Ops;

  static V load(const T *p) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p));
    return {_mm256_castsi256_ps(_mm256_slli_epi32(x, 16)),
            _mm256_castsi256_ps(_mm256_and_si256(x, _mm256_set1_epi32(int(0xffff0000u))))};
  }
  // The bfloat16 of each float32 lane, in the lane's high half.
  static __m256i round_high(__m256 v) {
    const __m256i bits = _mm256_castps_si256(v);
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
    const __m256i rounded =
        _mm256_add_epi32(bits, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7fff)));
    const __m256i nan = _mm256_or_si256(bits, _mm256_set1_epi32(0x00400000));
    const __m256i is_nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    return _mm256_blendv_epi8(rounded, nan, is_nan);
  }
  static __m256i narrow(V v) {
    return _mm256_blend_epi16(_mm256_srli_epi32(round_high(v.lo), 16), round_high(v.hi), 0xaa);
  }

  static V add(V a, V b) { return {F::add(a.lo, b.lo), F::add(a.hi, b.hi)}; }
  static V mul(V a, V b) { return {F::mul(a.lo, b.lo), F::mul(a.hi, b.hi)}; }
  static V min(V a, V b) { return {F::min(a.lo, b.lo), F::min(a.hi, b.hi)}; }
  static V max(V a, V b) { return {F::max(a.lo, b.lo), F::max(a.hi, b.hi)}; }
  static V divide(V a, const Divide<float> &d) { return {F::divide(a.lo, d), F::divide(a.hi, d)}; }
};

struct Float64Lanes : FloatOps<double> {
  using T = double;
  static V load(const T *p) { return _mm256_loadu_pd(p); }
  static V narrow(V v) { return v; }
};

// 8-, 32- and 64-bit integers. Two's-complement add and multiply give the
// wrapped result for signed and unsigned alike; only min/max differ.
template <class Int>
struct IntLanes {
  using T = Int;
  using V = __m256i;
  static constexpr size_t W = 32 / sizeof(T);
  static constexpr bool kSigned = std::is_signed_v<T>;
  static_assert(sizeof(T) == 1 || sizeof(T) == 4 || sizeof(T) == 8);

  static V load(const T *p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)); }
  static V narrow(V v) { return v; }
  static V add(V a, V b) {
    if constexpr (sizeof(T) == 1) return _mm256_add_epi8(a, b);
    else if constexpr (sizeof(T) == 4) return _mm256_add_epi32(a, b);
    else return _mm256_add_epi64(a, b);
  }
  static V mul(V a, V b) {
    if constexpr (sizeof(T) == 1) {
      // No byte multiply: multiply even and odd bytes as 16-bit lanes and
      // keep the low byte of each product.
      const V even = _mm256_mullo_epi16(a, b);
      const V odd = _mm256_mullo_epi16(_mm256_srli_epi16(a, 8), _mm256_srli_epi16(b, 8));
      return _mm256_or_si256(_mm256_and_si256(even, _mm256_set1_epi16(0xff)),
                             _mm256_slli_epi16(odd, 8));
    } else if constexpr (sizeof(T) == 4) {
      return _mm256_mullo_epi32(a, b);
    } else {
      // No 64-bit multiply: lo*lo + ((lo*hi + hi*lo) << 32).
      const V lo_lo = _mm256_mul_epu32(a, b);
      const V cross = _mm256_mullo_epi32(a, _mm256_shuffle_epi32(b, _MM_SHUFFLE(2, 3, 0, 1)));
      const V cross_sum = _mm256_add_epi32(cross, _mm256_srli_epi64(cross, 32));
      return _mm256_add_epi64(lo_lo, _mm256_slli_epi64(cross_sum, 32));
    }
  }
  // a < b, for 64-bit lanes (no unsigned compare: flip the sign bits).
  static V less64(V a, V b) {
    if constexpr (!kSigned) {
      const V flip = _mm256_set1_epi64x(INT64_MIN);
      a = _mm256_xor_si256(a, flip);
      b = _mm256_xor_si256(b, flip);
    }
    return _mm256_cmpgt_epi64(b, a);
  }
  static V min(V a, V b) {
    if constexpr (sizeof(T) == 1) return kSigned ? _mm256_min_epi8(a, b) : _mm256_min_epu8(a, b);
    else if constexpr (sizeof(T) == 4)
      return kSigned ? _mm256_min_epi32(a, b) : _mm256_min_epu32(a, b);
    else return _mm256_blendv_epi8(b, a, less64(a, b));
  }
  static V max(V a, V b) {
    if constexpr (sizeof(T) == 1) return kSigned ? _mm256_max_epi8(a, b) : _mm256_max_epu8(a, b);
    else if constexpr (sizeof(T) == 4)
      return kSigned ? _mm256_max_epi32(a, b) : _mm256_max_epu32(a, b);
    else return _mm256_blendv_epi8(b, a, less64(b, a));
  }
  // No vector integer division: divide lane by lane (AVG of integers is
  // rare; correctness, truncation toward zero, comes from element.h).
  static V divide(V v, const Divide<T> &d) {
    alignas(32) T lanes[W];
    put<false>(lanes, v);
    for (T &x : lanes) x = d(x);
    return load(lanes);
  }
};

template <smd_datatype_t D>
struct LanesOf;
#define SMD_INT_LANES(D, Stored) \
  template <>                    \
  struct LanesOf<D> : IntLanes<Stored> {};
SMD_INTEGER_DATATYPES(SMD_INT_LANES)
#undef SMD_INT_LANES
template <>
struct LanesOf<SMD_FLOAT16> : Float16Lanes {};
template <>
struct LanesOf<SMD_BFLOAT16> : Bfloat16Lanes {};
template <>
struct LanesOf<SMD_FLOAT32> : Float32Lanes {};
template <>
struct LanesOf<SMD_FLOAT64> : Float64Lanes {};

// Streaming stores save the read-for-ownership of every output line (a
// third of the memory traffic of a + b: docs/PERFORMANCE.md) but leave the
// result out of the caches, and the caller may be about to read it. So
// stream only when inputs and output together overflow what the node's
// calibration found a cache keeps (sysconf's last-level cache size is not
// to be trusted in a VM), where the result would be evicted anyway; and
// not in place, where the line was just read, so there is no
// read-for-ownership to save.
bool worth_streaming(const void *dst, const void *const *srcs, int nsrc, size_t output_bytes) {
  if ((size_t(nsrc) + 1) * output_bytes <= streaming_working_set()) return false;
  return std::none_of(srcs, srcs + nsrc, [dst](const void *s) { return s == dst; });
}

template <smd_datatype_t D, smd_op_t Op>
struct Avx2 {
  using L = LanesOf<D>;
  using T = typename L::T;
  using V = typename L::V;
  using C = typename Element<D>::C;
  static constexpr size_t W = L::W;
  // Accumulators of 4 registers (128 bytes) per input step: enough
  // independent loads to cover memory latency, few enough never to spill.
  static constexpr int kUnroll = 128 / sizeof(V);

  static V combine(V acc, V x) {
    if constexpr (Op == SMD_SUM) return L::add(acc, x);
    else if constexpr (Op == SMD_PROD) return L::mul(acc, x);
    else if constexpr (Op == SMD_MIN) return L::min(acc, x);
    else return L::max(acc, x);
  }

  // U vectors of output at `out` from the same positions of every input;
  // src(k) says where input k's vectors start. All inputs are read before
  // out is written, so out may be one of them.
  template <int U, bool Div, bool Stream, class Src>
  static void block(T *out, int nsrc, const Divide<C> &div, Src src) {
    V acc[U];
    const T *p = src(0);
    for (int u = 0; u < U; ++u) acc[u] = L::load(p + u * W);
    for (int k = 1; k < nsrc; ++k) {
      p = src(k);
      for (int u = 0; u < U; ++u) acc[u] = combine(acc[u], L::load(p + u * W));
    }
    for (int u = 0; u < U; ++u) {
      if constexpr (Div) acc[u] = L::divide(acc[u], div);
      put<Stream>(out + u * W, L::narrow(acc[u]));
    }
  }

  // Elements [begin, end).
  template <bool Div, bool Stream>
  static void range(T *dst, const void *const *srcs, int nsrc, size_t begin, size_t end,
                    const Divide<C> &div) {
    auto at = [srcs](int k, size_t i) { return static_cast<const T *>(srcs[k]) + i; };
    size_t i = begin;
    for (; i + kUnroll * W <= end; i += kUnroll * W) {
      block<kUnroll, Div, Stream>(dst + i, nsrc, div, [&](int k) { return at(k, i); });
    }
    for (; i + W <= end; i += W) {
      block<1, Div, Stream>(dst + i, nsrc, div, [&](int k) { return at(k, i); });
    }
    if (i == end) return;
    // A partial vector goes through a buffer, so nothing is read or written
    // past the ends of the arrays.
    const size_t bytes = (end - i) * sizeof(T);
    alignas(32) T in[W] = {};
    alignas(32) T out[W];
    block<1, Div, false>(out, nsrc, div, [&](int k) {
      std::memcpy(in, at(k, i), bytes);
      return static_cast<const T *>(in);
    });
    std::memcpy(dst + i, out, bytes);
  }

  template <bool Div>
  static void reduce(T *dst, const void *const *srcs, int nsrc, size_t count,
                     const Divide<C> &div) {
    const auto address = reinterpret_cast<uintptr_t>(dst);
    if (!worth_streaming(dst, srcs, nsrc, count * sizeof(T)) || address % sizeof(T) != 0) {
      return range<Div, false>(dst, srcs, nsrc, 0, count, div);
    }
    // Normal stores up to dst's first cache-line boundary, so that every
    // streaming store after it is aligned.
    const size_t head = std::min(count, (64 - address % 64) % 64 / sizeof(T));
    range<Div, false>(dst, srcs, nsrc, 0, head, div);
    range<Div, true>(dst, srcs, nsrc, head, count, div);
    // Streaming stores are weakly ordered: make them visible before the
    // caller signals anyone that the output is ready.
    _mm_sfence();
  }
};

}  // namespace

constinit const KernelTable avx2_kernels = make_kernel_table<Avx2>("avx2+f16c");

}  // namespace smd::reduce

#if defined(__clang__)
#pragma clang attribute pop
#endif

#endif  // x86
