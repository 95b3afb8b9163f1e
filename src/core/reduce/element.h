// What each datatype and operation means on one element: the storage and
// compute types, the combine step and the finishing division. The portable
// kernels are built from these directly; the AVX2 kernels use them for the
// steps they do lane by lane, so both kernel sets give the same bits.
#pragma once

#include "core/reduce/half.h"
#include "core/util/dtype.h"

#include <smd.h>

#include <cstdint>
#include <type_traits>

// combine() and Divide are also the device kernels' (src/gpu), so host
// and device reductions share one definition of every operation.
#if defined(__CUDACC__)
#define SMD_HOST_DEVICE __host__ __device__
#else
#define SMD_HOST_DEVICE
#endif

namespace smd::reduce {

// T: how an element is stored; C: what it is combined in.
template <class Stored, class Computed = Stored>
struct PlainElement {
  using T = Stored;
  using C = Computed;
  static C load(T x) { return x; }
  static T store(C c) { return c; }
};

template <smd_datatype_t D>
struct Element;
#define SMD_PLAIN_ELEMENT(D, Stored) \
  template <>                        \
  struct Element<D> : PlainElement<Stored> {};
SMD_INTEGER_DATATYPES(SMD_PLAIN_ELEMENT)
SMD_WIDE_FLOAT_DATATYPES(SMD_PLAIN_ELEMENT)
#undef SMD_PLAIN_ELEMENT
// 16-bit floats: stored as their bits, computed in float.
template <float (*Widen)(uint16_t), uint16_t (*Narrow)(float)>
struct HalfElement {
  using T = uint16_t;
  using C = float;
  static C load(T x) { return Widen(x); }
  static T store(C c) { return Narrow(c); }
};
template <>
struct Element<SMD_FLOAT16> : HalfElement<half_to_float, float_to_half> {};
template <>
struct Element<SMD_BFLOAT16> : HalfElement<bfloat16_to_float, float_to_bfloat16> {};

// acc op x. MIN and MAX are written as vminps/vmaxps(acc, x) behave, so the
// vector and scalar forms agree even on NaN and signed zeros: x is chosen
// whenever the comparison is false. Integer SUM and PROD wrap: they are
// computed in an unsigned type at least as wide as int (no promotion to
// signed int, so no overflow UB) and converted back, which C++20 defines
// as modulo 2^N.
template <smd_op_t Op, class C>
SMD_HOST_DEVICE inline C combine(C acc, C x) {
  if constexpr (Op == SMD_MIN) {
    return acc < x ? acc : x;
  } else if constexpr (Op == SMD_MAX) {
    return acc > x ? acc : x;
  } else if constexpr (std::is_floating_point_v<C>) {
    return Op == SMD_SUM ? acc + x : acc * x;
  } else {
    using U = std::common_type_t<std::make_unsigned_t<C>, unsigned>;
    const U a = U(std::make_unsigned_t<C>(acc));
    const U b = U(std::make_unsigned_t<C>(x));
    return C(Op == SMD_SUM ? U(a + b) : U(a * b));
  }
}

// The finishing division of SMD_AVG. Floats are multiplied by 1/divisor
// computed in the compute type (one rounding, and it vectorizes);
// integers are divided, truncating toward zero.
template <class C>
struct Divide {
  SMD_HOST_DEVICE explicit Divide(int d)
      : divisor(d), inverse(std::is_floating_point_v<C> ? C(1) / C(d) : C(0)) {}
  SMD_HOST_DEVICE C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>) {
      return x * inverse;
    } else if constexpr (std::is_signed_v<C>) {
      return C(int64_t(x) / int64_t(divisor));
    } else {
      return C(uint64_t(x) / uint64_t(divisor));
    }
  }
  int divisor;
  C inverse;  // floats only
};

}  // namespace smd::reduce
