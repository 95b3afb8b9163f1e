// Reference float16/bfloat16 conversions for the tests, written from the
// formats' definitions with double arithmetic and nearbyint(): a different
// road from the bit tricks of src/core/reduce/half.h.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace smd::reduce::reference {

inline uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// A 16-bit float format: `mantissa_bits` stored mantissa bits, exponent
// bias `bias`, exponent field all ones for inf/NaN.
struct Format {
  int mantissa_bits;
  int exponent_bits;
  int bias() const { return (1 << (exponent_bits - 1)) - 1; }
  int min_exponent() const { return 1 - bias(); }  // of the smallest normal
  uint16_t exponent_mask() const { return uint16_t(((1 << exponent_bits) - 1) << mantissa_bits); }
  uint16_t mantissa_mask() const { return uint16_t((1 << mantissa_bits) - 1); }
  uint16_t quiet_bit() const { return uint16_t(1 << (mantissa_bits - 1)); }
  double max_finite() const {
    return std::ldexp(2.0 - std::ldexp(1.0, -mantissa_bits), (1 << exponent_bits) - 2 - bias());
  }
};

inline constexpr Format kHalf{10, 5};
inline constexpr Format kBfloat16{7, 8};

inline bool is_nan(Format fmt, uint16_t h) {
  return (h & fmt.exponent_mask()) == fmt.exponent_mask() && (h & fmt.mantissa_mask()) != 0;
}

inline double to_double(Format fmt, uint16_t h) {
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  const int exponent = (h & fmt.exponent_mask()) >> fmt.mantissa_bits;
  const int mantissa = h & fmt.mantissa_mask();
  if (exponent == 0) {
    return sign * std::ldexp(mantissa, fmt.min_exponent() - fmt.mantissa_bits);
  }
  if (exponent == (1 << fmt.exponent_bits) - 1) {
    return mantissa == 0 ? sign * std::numeric_limits<double>::infinity()
                         : std::numeric_limits<double>::quiet_NaN();
  }
  return sign *
         std::ldexp((1 << fmt.mantissa_bits) + mantissa, exponent - fmt.bias() - fmt.mantissa_bits);
}

// Encode a value that is exactly representable (finite, in range).
inline uint16_t encode_exact(Format fmt, double magnitude) {
  if (magnitude < std::ldexp(1.0, fmt.min_exponent())) {
    return uint16_t(magnitude / std::ldexp(1.0, fmt.min_exponent() - fmt.mantissa_bits));
  }
  int e;
  std::frexp(magnitude, &e);  // magnitude = m * 2^e, m in [0.5, 1)
  const int exponent = e - 1;
  const double mantissa =
      std::ldexp(magnitude, fmt.mantissa_bits - exponent) - (1 << fmt.mantissa_bits);
  return uint16_t(((exponent + fmt.bias()) << fmt.mantissa_bits) | int(mantissa));
}

// Round to nearest, ties to even (nearbyint in the default rounding mode).
// NaN: sign kept, quiet bit set, the top payload bits kept (as x86's F16C).
inline uint16_t from_float(Format fmt, float f) {
  const uint32_t u = bits_of(f);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000);
  if (std::isnan(f)) {
    const uint32_t payload = (u & 0x7fffff) >> (23 - fmt.mantissa_bits);
    return uint16_t(sign | fmt.exponent_mask() | fmt.quiet_bit() | payload);
  }
  const double magnitude = std::fabs(double(f));
  if (std::isinf(f)) return uint16_t(sign | fmt.exponent_mask());
  if (magnitude == 0) return sign;
  int e;
  std::frexp(magnitude, &e);
  const int exponent = std::max(e - 1, fmt.min_exponent());
  const double quantum = std::ldexp(1.0, exponent - fmt.mantissa_bits);
  const double rounded = std::nearbyint(magnitude / quantum) * quantum;
  if (rounded > fmt.max_finite()) return uint16_t(sign | fmt.exponent_mask());
  return uint16_t(sign | encode_exact(fmt, rounded));
}

}  // namespace smd::reduce::reference
