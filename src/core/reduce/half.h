// float16 (IEEE binary16) and bfloat16 <-> float32 scalar conversions.
// Float to 16-bit rounds to nearest, ties to even; subnormals, infinities
// and NaNs are handled. Each is written so the compiler needs no branch
// (loops calling them auto-vectorize), and each gives the same bits as the
// x86 F16C instructions (vcvtph2ps / vcvtps2ph), which the AVX2 kernels
// use, so both kernel sets agree bit for bit: a NaN stays a NaN and comes
// out quiet.
#pragma once

#include <bit>
#include <cstdint>

namespace smd::reduce {

// cond ? a : b, by masks rather than a branch: GCC will not if-convert a
// choice between float results (they might trap), and a branch in a loop
// stops it from vectorizing.
inline uint32_t select_bits(bool cond, uint32_t a, uint32_t b) {
  const uint32_t mask = 0u - uint32_t(cond);
  return (a & mask) | (b & ~mask);
}

inline float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  // Normal numbers only need the exponent rebiased from 15 to 127.
  const uint32_t normal = ((exponent + (127 - 15)) << 23) | (mantissa << 13);
  // A subnormal half is mantissa * 2^-24, which float32 holds exactly.
  const uint32_t subnormal = std::bit_cast<uint32_t>(float(mantissa) * 0x1p-24f);
  // Infinity keeps a zero mantissa; a NaN keeps its payload and is quieted.
  const uint32_t special = 0x7f800000u | (mantissa << 13) | (mantissa != 0 ? 0x00400000u : 0u);
  const uint32_t magnitude =
      select_bits(exponent == 0, subnormal, exponent == 31 ? special : normal);
  return std::bit_cast<float>(sign | magnitude);
}

inline uint16_t float_to_half(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t magnitude = bits & 0x7fffffffu;
  // Rebias the exponent, then round the 13 dropped mantissa bits to nearest
  // even: adding 0xfff (plus 1 when the kept lowest bit is odd) carries
  // exactly when the dropped part is above half, or half with an odd kept
  // bit. A carry out of the mantissa correctly bumps the exponent.
  const uint32_t normal =
      (magnitude - ((127u - 15u) << 23) + 0xfffu + ((magnitude >> 13) & 1u)) >> 13;
  // Below 2^-14 the result is a multiple of 2^-24. Adding 0.5 moves the
  // value to where float32's own ulp is 2^-24, so the FPU's
  // round-to-nearest-even (the default mode) does the rounding; the
  // mantissa bits are then the half's subnormal bits (1024 of them is the
  // smallest normal, also right). Denormals-are-zero cannot hurt: a float32
  // subnormal rounds to 0 anyway.
  const uint32_t subnormal =
      std::bit_cast<uint32_t>(std::bit_cast<float>(magnitude) + 0.5f) - 0x3f000000u;
  // NaN: keep the top payload bits, set the quiet bit.
  const uint32_t nan = 0x7e00u | ((magnitude >> 13) & 0x3ffu);
  const uint32_t result =
      select_bits(magnitude > 0x7f800000u, nan,
                  select_bits(magnitude >= 0x477ff000u, 0x7c00u,  // >= 65520: inf
                              select_bits(magnitude >= 0x38800000u, normal, subnormal)));  // 2^-14
  return uint16_t(sign | result);
}

inline float bfloat16_to_float(uint16_t b) { return std::bit_cast<float>(uint32_t(b) << 16); }

inline uint16_t float_to_bfloat16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  // Same rounding as float_to_half on the 16 dropped bits; finite values
  // past the largest bfloat16 carry into infinity.
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  const uint32_t nan = (bits >> 16) | 0x0040u;
  return uint16_t((bits & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

}  // namespace smd::reduce
