// Test values and expected results for every smd datatype and operation,
// shared by smd-bench's check, the collective tests and the examples.
// Header-only; uses only the public ABI's enums.
//
// value(rank, i) is a small integer (exact in every datatype, including
// float16/bfloat16, for sums over up to 64 ranks), so expected results
// are exact for SUM/PROD/MIN/MAX; AVG on floats is compared with a
// tolerance (one rounding per algorithm step).
#pragma once

#include <smd.h>

#include <cmath>
#include <cstdint>
#include <cstring>

namespace smdvals {

// The library's own answer (one table, smd_datatype_size); 8 for a value
// it does not know (the tools check datatypes before they get here).
inline size_t dtype_size(smd_datatype_t d) {
  size_t n = 8;
  return smd_datatype_size(d, &n) == SMD_SUCCESS ? n : 8;
}

inline bool is_float(smd_datatype_t d) {
  return d == SMD_FLOAT16 || d == SMD_BFLOAT16 || d == SMD_FLOAT32 || d == SMD_FLOAT64;
}
inline bool is_unsigned(smd_datatype_t d) {
  return d == SMD_UINT8 || d == SMD_UINT32 || d == SMD_UINT64;
}

// float32 <-> binary16 / bfloat16 with round-to-nearest-even (small values
// only need to be right here: they are all exactly representable).
inline uint16_t f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff)
    return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t h = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;
  return static_cast<uint16_t>(sign | h);
}

inline float f16_to_f32(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ffu, x;
  if (exp == 0) {
    if (!mant) {
      x = sign;
    } else {
      int e = -1;
      do {
        mant <<= 1;
        ++e;
      } while (!(mant & 0x400u));
      x = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  memcpy(&f, &x, 4);
  return f;
}

inline uint16_t f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);
  x += 0x7fffu + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

inline float bf16_to_f32(uint16_t b) {
  uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

// The value of type T stored at p (any alignment), and storing one there.
template <class T>
T read_as(const uint8_t *p) {
  T v;
  memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
void write_as(uint8_t *p, T v) {
  memcpy(p, &v, sizeof v);
}

// Element i of buf, as a double.
inline double load(const void *buf, size_t i, smd_datatype_t d) {
  const uint8_t *p = static_cast<const uint8_t *>(buf) + i * dtype_size(d);
  switch (d) {
    case SMD_INT8: return read_as<int8_t>(p);
    case SMD_UINT8: return read_as<uint8_t>(p);
    case SMD_INT32: return read_as<int32_t>(p);
    case SMD_UINT32: return read_as<uint32_t>(p);
    case SMD_INT64: return static_cast<double>(read_as<int64_t>(p));
    case SMD_UINT64: return static_cast<double>(read_as<uint64_t>(p));
    case SMD_FLOAT16: return f16_to_f32(read_as<uint16_t>(p));
    case SMD_BFLOAT16: return bf16_to_f32(read_as<uint16_t>(p));
    case SMD_FLOAT32: return read_as<float>(p);
    default: return read_as<double>(p);
  }
}

// Store v (already in range for the type, or wrapped for integers).
inline void store(void *buf, size_t i, smd_datatype_t d, double v) {
  uint8_t *p = static_cast<uint8_t *>(buf) + i * dtype_size(d);
  int64_t whole = is_float(d) ? 0 : static_cast<int64_t>(v);
  switch (d) {
    case SMD_INT8: return write_as(p, static_cast<int8_t>(whole));
    case SMD_UINT8: return write_as(p, static_cast<uint8_t>(whole));
    case SMD_INT32: return write_as(p, static_cast<int32_t>(whole));
    case SMD_UINT32: return write_as(p, static_cast<uint32_t>(whole));
    case SMD_INT64: return write_as(p, whole);
    case SMD_UINT64: return write_as(p, static_cast<uint64_t>(whole));
    case SMD_FLOAT16: return write_as(p, f32_to_f16(static_cast<float>(v)));
    case SMD_BFLOAT16: return write_as(p, f32_to_bf16(static_cast<float>(v)));
    case SMD_FLOAT32: return write_as(p, static_cast<float>(v));
    default: return write_as(p, v);
  }
}

// Every datatype and every op, for tests that cover them all.
inline constexpr smd_datatype_t kAllDatatypes[] = {
    SMD_INT8,   SMD_UINT8,   SMD_INT32,    SMD_UINT32,  SMD_INT64,
    SMD_UINT64, SMD_FLOAT16, SMD_BFLOAT16, SMD_FLOAT32, SMD_FLOAT64};
inline constexpr smd_op_t kAllOps[] = {SMD_SUM, SMD_PROD, SMD_MIN, SMD_MAX, SMD_AVG};

// The input of `rank` at element i for operation op: small integers, all
// positive for unsigned types; PROD inputs are +-1 and 2 on a few ranks so
// products stay exact and in range.
inline double value(int rank, size_t i, smd_op_t op, smd_datatype_t d) {
  uint64_t h = (static_cast<uint64_t>(rank) * 0x9E3779B97F4A7C15ull) ^ (i * 0xC2B2AE3D27D4EB4Full);
  h ^= h >> 29;
  int v;
  if (op == SMD_PROD) {
    v = (rank < 3 && (h & 8)) ? 2 : 1;
    if (!is_unsigned(d) && (h & 16)) v = -v;
  } else {
    v = static_cast<int>(h % 5) - 2;  // -2..2
    if (is_unsigned(d)) v += 2;       // 0..4
  }
  return v;
}

// value() as stored in the datatype and read back (what a copy delivers).
inline double load_value(int rank, size_t i, smd_op_t op, smd_datatype_t d) {
  uint8_t tmp[8];
  store(tmp, 0, d, value(rank, i, op, d));
  return load(tmp, 0, d);
}

// Expected result of reducing value(0..nranks-1, i) with op, in the
// semantics of smd.h (integers wrap and AVG truncates).
inline double expected(int nranks, size_t i, smd_op_t op, smd_datatype_t d) {
  double acc = value(0, i, op, d);
  for (int r = 1; r < nranks; ++r) {
    double v = value(r, i, op, d);
    switch (op) {
      case SMD_SUM:
      case SMD_AVG: acc += v; break;
      case SMD_PROD: acc *= v; break;
      case SMD_MIN: acc = v < acc ? v : acc; break;
      case SMD_MAX: acc = v > acc ? v : acc; break;
      default: break;
    }
  }
  // Integers wrap to the type's width (an integer AVG divides the wrapped sum).
  uint8_t tmp[8];
  store(tmp, 0, d, acc);
  if (op != SMD_AVG) return load(tmp, 0, d);
  if (is_float(d)) acc = acc / nranks;
  else acc = std::trunc(load(tmp, 0, d) / nranks);
  store(tmp, 0, d, acc);
  return load(tmp, 0, d);
}

// Whether got matches want for this datatype and op.
inline bool close_enough(double got, double want, smd_datatype_t d, smd_op_t op) {
  if (!is_float(d) || op != SMD_AVG) return got == want;
  double tol = d == SMD_BFLOAT16  ? 1.6e-2
               : d == SMD_FLOAT16 ? 2e-3
               : d == SMD_FLOAT32 ? 1e-6
                                  : 1e-12;
  return std::fabs(got - want) <= tol * (std::fabs(want) > 1 ? std::fabs(want) : 1);
}

}  // namespace smdvals
