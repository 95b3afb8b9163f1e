// The reduction kernels (src/core/reduce/reduce.h) against a scalar
// reference, for every datatype, operation, input count, length and
// aliasing, in both implementations; then the edge cases by name.
//
// The reference combines left to right in the documented compute type
// (float for float16/bfloat16/float32, double for float64) and rounds
// float16/bfloat16 once with reference.h's conversion. That is the
// contract itself, so results must match bit for bit for any inputs; no
// tolerance is needed.
#include "core/reduce/reduce.h"

#include "core/util/dtype.h"
#include "core/util/error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "reference.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace smd::reduce {
namespace {

namespace ref = reference;

// What the test knows of each datatype: how it is stored, what it is
// computed in, and how to make inputs.
template <class Stored, class Computed = Stored>
struct Plain {
  using T = Stored;
  using C = Computed;
  static C widen(T x) { return x; }
  static T narrow(C c) { return c; }
};
template <smd_datatype_t D>
struct Type;
template <>
struct Type<SMD_INT8> : Plain<int8_t> {};
template <>
struct Type<SMD_UINT8> : Plain<uint8_t> {};
template <>
struct Type<SMD_INT32> : Plain<int32_t> {};
template <>
struct Type<SMD_UINT32> : Plain<uint32_t> {};
template <>
struct Type<SMD_INT64> : Plain<int64_t> {};
template <>
struct Type<SMD_UINT64> : Plain<uint64_t> {};
template <>
struct Type<SMD_FLOAT32> : Plain<float> {};
template <>
struct Type<SMD_FLOAT64> : Plain<double> {};
template <ref::Format F>
struct Short {
  using T = uint16_t;
  using C = float;
  static C widen(T x) { return float(ref::to_double(F, x)); }
  static T narrow(C c) { return ref::from_float(F, c); }
};
template <>
struct Type<SMD_FLOAT16> : Short<ref::kHalf> {};
template <>
struct Type<SMD_BFLOAT16> : Short<ref::kBfloat16> {};

template <smd_datatype_t D>
typename Type<D>::T random_value(std::mt19937_64 &rng) {
  using Ty = Type<D>;
  if constexpr (std::is_floating_point_v<typename Ty::C>) {
    // Products of 13 inputs stay finite even in float16.
    std::uniform_real_distribution<typename Ty::C> dist(-2, 2);
    return Ty::narrow(dist(rng));
  } else {
    return typename Ty::T(rng());  // every bit pattern: wraps, signs
  }
}

// The reference: acc op x written from the spec, not from element.h.
template <class C>
C ref_combine(smd_op_t op, C acc, C x) {
  if constexpr (std::is_floating_point_v<C>) {
    switch (op) {
      case SMD_SUM: return acc + x;
      case SMD_PROD: return acc * x;
      case SMD_MIN: return acc < x ? acc : x;
      default: return acc > x ? acc : x;
    }
  } else {
    switch (op) {
      case SMD_SUM: return C(uint64_t(acc) + uint64_t(x));  // mod 2^64, then 2^N
      case SMD_PROD: return C(uint64_t(acc) * uint64_t(x));
      case SMD_MIN: return std::min(acc, x);
      default: return std::max(acc, x);
    }
  }
}

template <class C>
C ref_divide(C x, int divisor) {
  if constexpr (std::is_floating_point_v<C>) {
    return x * (C(1) / C(divisor));
  } else if constexpr (std::is_signed_v<C>) {
    return C(int64_t(x) / divisor);  // C++ truncates toward zero
  } else {
    return C(uint64_t(x) / uint64_t(divisor));
  }
}

template <smd_datatype_t D>
std::vector<typename Type<D>::T> expected(const std::vector<std::vector<typename Type<D>::T>> &in,
                                          size_t count, smd_op_t op, int divisor) {
  using Ty = Type<D>;
  std::vector<typename Ty::T> out(count);
  for (size_t i = 0; i < count; ++i) {
    typename Ty::C acc = Ty::widen(in[0][i]);
    for (size_t k = 1; k < in.size(); ++k) acc = ref_combine(op, acc, Ty::widen(in[k][i]));
    if (divisor > 1) acc = ref_divide(acc, divisor);
    out[i] = Ty::narrow(acc);
  }
  return out;
}

// Runs the implementation chosen by `portable` and restores the default.
struct UseImplementation {
  explicit UseImplementation(bool portable) { force_portable(portable); }
  ~UseImplementation() { force_portable(false); }
};

enum class Alias { kSeparate, kFirst, kLast };
const char *alias_name(Alias a) {
  return a == Alias::kSeparate ? "separate" : a == Alias::kFirst ? "dst=srcs[0]" : "dst=srcs[last]";
}

// Runs reduce() on copies of `in` placed at odd element offsets (so
// vectors are unaligned), with dst per `alias`, and returns dst. Elements
// just past dst must stay untouched.
template <class T>
std::vector<T> run_reduce(const std::vector<std::vector<T>> &in, size_t count, smd_datatype_t dtype,
                          smd_op_t op, int divisor, Alias alias) {
  constexpr size_t kGuard = 40;
  const int nsrc = int(in.size());
  std::vector<std::vector<T>> bufs(nsrc + 1);
  std::vector<const void *> srcs(nsrc);
  for (int k = 0; k <= nsrc; ++k) {
    const size_t offset = size_t(k + 1) % 4;
    bufs[k].assign(offset + count + kGuard, T(0x5a));
    if (k < nsrc) {
      std::copy(in[k].begin(), in[k].begin() + count, bufs[k].begin() + offset);
      srcs[k] = bufs[k].data() + offset;
    }
  }
  T *dst = alias == Alias::kSeparate ? bufs[nsrc].data() + (nsrc + 1) % 4
           : alias == Alias::kFirst  ? const_cast<T *>(static_cast<const T *>(srcs[0]))
                                     : const_cast<T *>(static_cast<const T *>(srcs[nsrc - 1]));
  reduce(dst, srcs.data(), nsrc, count, dtype, op, divisor);
  for (size_t g = 0; g < kGuard - 4; ++g) {
    EXPECT_EQ(dst[count + g], T(0x5a)) << "written past the end, " << g;
  }
  return std::vector<T>(dst, dst + count);
}

template <class T>
std::string show(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::to_string(x);
  else
    return std::to_string(int64_t(x)) + " (0x" + [&] {
      char buf[24];
      std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(x));
      return std::string(buf);
    }() + ")";
}

template <smd_datatype_t D>
void check_against_reference(smd_op_t op, std::initializer_list<int> nsrcs,
                             std::initializer_list<size_t> counts) {
  using T = typename Type<D>::T;
  std::mt19937_64 rng(static_cast<uint64_t>(D) * 131 + static_cast<uint64_t>(op));
  for (const int nsrc : nsrcs) {
    for (const size_t count : counts) {
      std::vector<std::vector<T>> in(nsrc, std::vector<T>(count));
      for (auto &v : in)
        for (T &x : v) x = random_value<D>(rng);
      for (const int divisor : {1, 3}) {
        const std::vector<T> want = expected<D>(in, count, op, divisor);
        for (const bool portable : {true, false}) {
          UseImplementation use(portable);
          for (const Alias alias : {Alias::kSeparate, Alias::kFirst, Alias::kLast}) {
            const std::vector<T> got = run_reduce(in, count, D, op, divisor, alias);
            for (size_t i = 0; i < count; ++i) {
              if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {
                FAIL() << implementation() << " nsrc " << nsrc << " count " << count << " divisor "
                       << divisor << " " << alias_name(alias) << ": element " << i << " is "
                       << show(got[i]) << ", want " << show(want[i]);
              }
            }
          }
        }
      }
    }
  }
}

struct Case {
  smd_datatype_t dtype;
  smd_op_t op;
};

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (int d = 0; d < SMD_DATATYPE_COUNT; ++d) {
    for (const smd_op_t op : {SMD_SUM, SMD_PROD, SMD_MIN, SMD_MAX}) {
      cases.push_back({smd_datatype_t(d), op});
    }
  }
  return cases;
}

std::string case_name(const testing::TestParamInfo<Case> &info) {
  return std::string(datatype_name(info.param.dtype)) + "_" + op_name(info.param.op);
}

template <template <smd_datatype_t> class Check, class... Args>
void for_datatype(smd_datatype_t d, Args... args) {
  switch (d) {
    case SMD_INT8: return Check<SMD_INT8>::run(args...);
    case SMD_UINT8: return Check<SMD_UINT8>::run(args...);
    case SMD_INT32: return Check<SMD_INT32>::run(args...);
    case SMD_UINT32: return Check<SMD_UINT32>::run(args...);
    case SMD_INT64: return Check<SMD_INT64>::run(args...);
    case SMD_UINT64: return Check<SMD_UINT64>::run(args...);
    case SMD_FLOAT16: return Check<SMD_FLOAT16>::run(args...);
    case SMD_BFLOAT16: return Check<SMD_BFLOAT16>::run(args...);
    case SMD_FLOAT32: return Check<SMD_FLOAT32>::run(args...);
    case SMD_FLOAT64: return Check<SMD_FLOAT64>::run(args...);
    default: FAIL() << "datatype " << int(d);
  }
}

template <smd_datatype_t D>
struct AgainstReference {
  static void run(smd_op_t op) {
    check_against_reference<D>(op, {1, 2, 3, 4, 5, 7, 8, 13}, {0, 1, 7, 15, 16, 17, 1000, 4099});
  }
};

// Special values (NaN, infinities, signed zeros, subnormals, extremes)
// among ordinary ones: no reference, but both implementations must give
// the same bits (NaN: see same()).
template <smd_datatype_t D>
struct ImplementationsAgree {
  using T = typename Type<D>::T;
  static std::vector<T> specials() {
    if constexpr (D == SMD_FLOAT16 || D == SMD_BFLOAT16) {
      const bool half = D == SMD_FLOAT16;
      return {0x0000,
              0x8000,
              0x0001,
              0x8001,
              uint16_t(half ? 0x7c00 : 0x7f80),
              uint16_t(half ? 0xfc00 : 0xff80),
              uint16_t(half ? 0x7e00 : 0x7fc0),
              uint16_t(half ? 0x7c01 : 0x7f81),
              uint16_t(half ? 0x7bff : 0x7f7f),
              uint16_t(half ? 0xfbff : 0xff7f),
              uint16_t(half ? 0x0400 : 0x0080)};
    } else if constexpr (std::is_floating_point_v<T>) {
      using L = std::numeric_limits<T>;
      return {T(0),           -T(0),          L::denorm_min(), -L::denorm_min(),   L::infinity(),
              -L::infinity(), L::quiet_NaN(), -L::quiet_NaN(), L::signaling_NaN(), L::max(),
              L::lowest(),    L::min()};
    } else {
      using L = std::numeric_limits<T>;
      return {T(0), T(1), T(-1), L::max(), L::min(), T(L::max() / 2 + 1)};
    }
  }
  static bool is_nan(T x) {
    if constexpr (D == SMD_FLOAT16) return ref::is_nan(ref::kHalf, x);
    else if constexpr (D == SMD_BFLOAT16) return ref::is_nan(ref::kBfloat16, x);
    else if constexpr (std::is_floating_point_v<T>) return std::isnan(x);
    else return false;
  }
  // Equal bits, or both NaN: when two NaNs meet, which one's sign and
  // payload comes out is left open by IEEE 754, and compilers swap the
  // operands of commutative operations freely.
  static bool same(T a, T b) {
    return std::memcmp(&a, &b, sizeof(T)) == 0 || (is_nan(a) && is_nan(b));
  }
  static void run(smd_op_t op) {
    std::mt19937_64 rng(99 + static_cast<uint64_t>(D) * 7 + static_cast<uint64_t>(op));
    const std::vector<T> special = specials();
    for (const int nsrc : {1, 2, 3, 5, 6, 9}) {
      for (const size_t count : {size_t(3), size_t(255), size_t(5000)}) {
        std::vector<std::vector<T>> in(nsrc, std::vector<T>(count));
        for (auto &v : in) {
          for (T &x : v) {
            x = rng() % 3 == 0 ? special[rng() % special.size()] : random_value<D>(rng);
          }
        }
        for (const int divisor : {1, 7}) {
          std::vector<T> got[2];
          for (const bool portable : {true, false}) {
            UseImplementation use(portable);
            got[portable] = run_reduce(in, count, D, op, divisor, Alias::kSeparate);
          }
          for (size_t i = 0; i < count; ++i) {
            ASSERT_TRUE(same(got[0][i], got[1][i]))
                << "nsrc " << nsrc << " count " << count << " divisor " << divisor << ": element "
                << i << " portable " << show(got[1][i]) << ", " << implementation() << " "
                << show(got[0][i]);
          }
        }
      }
    }
  }
};

class ReduceTest : public testing::TestWithParam<Case> {};

TEST_P(ReduceTest, MatchesReference) {
  for_datatype<AgainstReference>(GetParam().dtype, GetParam().op);
}

TEST_P(ReduceTest, ImplementationsAgreeOnSpecialValues) {
  for_datatype<ImplementationsAgree>(GetParam().dtype, GetParam().op);
}

INSTANTIATE_TEST_SUITE_P(All, ReduceTest, testing::ValuesIn(all_cases()), case_name);

// One-element reductions of given values, in both implementations.
template <class T>
T reduce_one(std::initializer_list<T> values, smd_datatype_t dtype, smd_op_t op, int divisor = 1) {
  std::vector<T> in(values);
  T result[2];
  for (const bool portable : {true, false}) {
    UseImplementation use(portable);
    std::vector<const void *> srcs;
    // 17 elements, each the same value, so the vector loop and the tail
    // both see it.
    std::vector<std::vector<T>> bufs;
    for (const T x : in) bufs.emplace_back(17, x);
    for (const auto &b : bufs) srcs.push_back(b.data());
    std::vector<T> out(17);
    reduce(out.data(), srcs.data(), int(srcs.size()), out.size(), dtype, op, divisor);
    for (const T x : out) EXPECT_EQ(x, out[0]);
    result[portable] = out[16];
  }
  EXPECT_EQ(result[0], result[1]) << "implementations differ";
  return result[0];
}

TEST(Reduce, IntegerWrapsAround) {
  EXPECT_EQ(reduce_one<int8_t>({127, 1}, SMD_INT8, SMD_SUM), -128);
  EXPECT_EQ(reduce_one<int8_t>({-128, -1}, SMD_INT8, SMD_SUM), 127);
  EXPECT_EQ(reduce_one<uint8_t>({255, 1}, SMD_UINT8, SMD_SUM), 0);
  EXPECT_EQ(reduce_one<int8_t>({16, 16}, SMD_INT8, SMD_PROD), 0);
  EXPECT_EQ(reduce_one<int8_t>({-3, 50}, SMD_INT8, SMD_PROD), int8_t(-150 + 256));
  EXPECT_EQ(reduce_one<uint8_t>({200, 3}, SMD_UINT8, SMD_PROD), uint8_t(600 % 256));
  EXPECT_EQ(reduce_one<int32_t>({INT32_MAX, 1}, SMD_INT32, SMD_SUM), INT32_MIN);
  EXPECT_EQ(reduce_one<int32_t>({65536, 65536}, SMD_INT32, SMD_PROD), 0);
  EXPECT_EQ(reduce_one<uint32_t>({UINT32_MAX, 2}, SMD_UINT32, SMD_SUM), 1u);
  EXPECT_EQ(reduce_one<int64_t>({INT64_MAX, 1}, SMD_INT64, SMD_SUM), INT64_MIN);
  EXPECT_EQ(reduce_one<int64_t>({INT64_MIN, -1}, SMD_INT64, SMD_PROD), INT64_MIN);
  EXPECT_EQ(reduce_one<uint64_t>({1ull << 32, 1ull << 32}, SMD_UINT64, SMD_PROD), 0u);
  EXPECT_EQ(reduce_one<uint64_t>({0x100000001ull, 0x100000001ull}, SMD_UINT64, SMD_PROD),
            0x200000001ull);
  EXPECT_EQ(reduce_one<int64_t>({-3, 0x7fffffffffll, 5}, SMD_INT64, SMD_PROD),
            int64_t(uint64_t(-15) * 0x7fffffffffull));
}

TEST(Reduce, MinMaxRespectSignedness) {
  EXPECT_EQ(reduce_one<int8_t>({-128, 127}, SMD_INT8, SMD_MIN), -128);
  EXPECT_EQ(reduce_one<int8_t>({-128, 127}, SMD_INT8, SMD_MAX), 127);
  EXPECT_EQ(reduce_one<uint8_t>({255, 1}, SMD_UINT8, SMD_MIN), 1);
  EXPECT_EQ(reduce_one<uint8_t>({128, 127}, SMD_UINT8, SMD_MAX), 128);
  EXPECT_EQ(reduce_one<int32_t>({-1, 1}, SMD_INT32, SMD_MIN), -1);
  EXPECT_EQ(reduce_one<uint32_t>({0xffffffffu, 1}, SMD_UINT32, SMD_MIN), 1u);
  EXPECT_EQ(reduce_one<uint32_t>({0x80000000u, 1}, SMD_UINT32, SMD_MAX), 0x80000000u);
  EXPECT_EQ(reduce_one<int64_t>({INT64_MIN, INT64_MAX, 0}, SMD_INT64, SMD_MIN), INT64_MIN);
  EXPECT_EQ(reduce_one<int64_t>({INT64_MIN, -1, -5}, SMD_INT64, SMD_MAX), -1);
  EXPECT_EQ(reduce_one<uint64_t>({~0ull, 1, 1ull << 63}, SMD_UINT64, SMD_MIN), 1u);
  EXPECT_EQ(reduce_one<uint64_t>({1, 1ull << 63, 5}, SMD_UINT64, SMD_MAX), 1ull << 63);
  EXPECT_EQ(reduce_one<float>({-0.5f, 3.0f, -7.0f}, SMD_FLOAT32, SMD_MIN), -7.0f);
  EXPECT_EQ(reduce_one<double>({-0.5, 3.0, -7.0}, SMD_FLOAT64, SMD_MAX), 3.0);
}

TEST(Reduce, IntegerDivisionTruncatesTowardZero) {
  EXPECT_EQ(reduce_one<int32_t>({-7, 0}, SMD_INT32, SMD_SUM, 2), -3);
  EXPECT_EQ(reduce_one<int32_t>({7, 0}, SMD_INT32, SMD_SUM, 2), 3);
  EXPECT_EQ(reduce_one<int32_t>({-5}, SMD_INT32, SMD_SUM, 3), -1);
  EXPECT_EQ(reduce_one<int8_t>({-100, -100}, SMD_INT8, SMD_SUM, 3),
            int8_t(56 / 3));  // -200 wraps to 56
  EXPECT_EQ(reduce_one<int8_t>({-128}, SMD_INT8, SMD_SUM, 300), 0);
  EXPECT_EQ(reduce_one<int8_t>({-128}, SMD_INT8, SMD_SUM, 2), -64);
  EXPECT_EQ(reduce_one<uint8_t>({255}, SMD_UINT8, SMD_SUM, 2), 127);
  EXPECT_EQ(reduce_one<uint32_t>({0xffffffffu, 0}, SMD_UINT32, SMD_SUM, 2), 0x7fffffffu);
  EXPECT_EQ(reduce_one<int64_t>({INT64_MIN, 0}, SMD_INT64, SMD_SUM, 2), INT64_MIN / 2);
  EXPECT_EQ(reduce_one<int64_t>({-9, -9, -9}, SMD_INT64, SMD_SUM, 4), -6);
  EXPECT_EQ(reduce_one<uint64_t>({~0ull}, SMD_UINT64, SMD_SUM, 3), ~0ull / 3);
}

TEST(Reduce, FloatDivisionMultipliesByTheReciprocal) {
  EXPECT_EQ(reduce_one<float>({1.0f, 2.0f}, SMD_FLOAT32, SMD_SUM, 4), 0.75f);
  EXPECT_EQ(reduce_one<float>({1.0f, 0.0f}, SMD_FLOAT32, SMD_SUM, 3), 1.0f * (1.0f / 3.0f));
  EXPECT_EQ(reduce_one<double>({1.0, 1.0}, SMD_FLOAT64, SMD_SUM, 3), 2.0 * (1.0 / 3.0));
  // float16: 1 + 2^-10 + 2^-10 is exact in float32 (rounding each step in
  // float16 would give 1 + 2^-10 + 2^-10 = 1 + 2^-9 too), then / 2 once.
  EXPECT_EQ(reduce_one<uint16_t>({0x3c01, 0x3c01}, SMD_FLOAT16, SMD_SUM, 2), 0x3c01);
  EXPECT_EQ(reduce_one<uint16_t>({0x4000, 0x4000, 0x4000}, SMD_BFLOAT16, SMD_SUM, 3),
            ref::from_float(ref::kBfloat16, 6.0f * (1.0f / 3.0f)));
}

// An order-free check of the single rounding: quarter-integer inputs up to
// 64 in magnitude give sums up to 13 * 64 that float32 and double hold
// exactly, whatever the order, but float16 (11 bits) and bfloat16 (8 bits)
// must round. Reference: the exact sum in double, rounded once by
// reference.h.
template <smd_datatype_t D>
void check_exact_sums(ref::Format format) {
  std::mt19937_64 rng(5);
  const size_t count = 999;
  for (const int nsrc : {2, 3, 8, 13}) {
    std::vector<std::vector<uint16_t>> in(nsrc, std::vector<uint16_t>(count));
    std::vector<double> sum(count, 0.0);
    for (auto &v : in) {
      for (size_t i = 0; i < count; ++i) {
        const double x = double(int64_t(rng() % 513) - 256) / 4;
        v[i] = ref::from_float(format, float(x));
        sum[i] += ref::to_double(format, v[i]);  // x itself, or rounded
      }
    }
    for (const bool portable : {true, false}) {
      UseImplementation use(portable);
      const std::vector<uint16_t> got = run_reduce(in, count, D, SMD_SUM, 1, Alias::kSeparate);
      for (size_t i = 0; i < count; ++i) {
        ASSERT_EQ(got[i], ref::from_float(format, float(sum[i])))
            << implementation() << " nsrc " << nsrc << " element " << i << ": exact sum " << sum[i];
      }
    }
  }
}

TEST(Reduce, HalfPrecisionSumsRoundOnceFromTheExactSum) {
  check_exact_sums<SMD_FLOAT16>(ref::kHalf);
  check_exact_sums<SMD_BFLOAT16>(ref::kBfloat16);
}

TEST(Reduce, HalfPrecisionAccumulatesInFloat32AndRoundsOnce) {
  // 2048 + 1 + 1: in float16 each step would round 2049 back to 2048.
  EXPECT_EQ(reduce_one<uint16_t>({0x6800, 0x3c00, 0x3c00}, SMD_FLOAT16, SMD_SUM), 0x6801);
  // bfloat16 256 + 1 + 1 = 258, each step alone would stay at 256.
  EXPECT_EQ(reduce_one<uint16_t>({0x4380, 0x3f80, 0x3f80}, SMD_BFLOAT16, SMD_SUM), 0x4381);
  // Overflow in float16 after the sum: 65504 + 16 = 65520, a tie: inf.
  EXPECT_EQ(reduce_one<uint16_t>({0x7bff, 0x4c00}, SMD_FLOAT16, SMD_SUM), 0x7c00);
  // NaN stays NaN.
  const uint16_t nan = reduce_one<uint16_t>({0x7e00, 0x3c00}, SMD_FLOAT16, SMD_SUM);
  EXPECT_TRUE(ref::is_nan(ref::kHalf, nan));
  const uint16_t bnan = reduce_one<uint16_t>({0x3f80, 0x7fc1}, SMD_BFLOAT16, SMD_PROD);
  EXPECT_TRUE(ref::is_nan(ref::kBfloat16, bnan));
}

// Past the last-level cache the AVX2 kernels switch to streaming stores
// after a head that aligns dst (run_reduce's dst is misaligned).
TEST(Reduce, LargeArraysMatchReference) {
  const size_t bytes = size_t(12) << 20;  // x3 arrays: over the 32 MiB mark
  check_against_reference<SMD_FLOAT32>(SMD_SUM, {2}, {bytes / 4 + 5});
  check_against_reference<SMD_BFLOAT16>(SMD_SUM, {2}, {bytes / 2 + 13});
  check_against_reference<SMD_FLOAT16>(SMD_MAX, {2}, {bytes / 2 + 3});
  check_against_reference<SMD_INT64>(SMD_PROD, {2}, {bytes / 8 + 1});
}

TEST(Reduce, Reduce2AndDivide) {
  for (const bool portable : {true, false}) {
    UseImplementation use(portable);
    std::vector<int32_t> a(100), b(100), out(100);
    for (int i = 0; i < 100; ++i) a[i] = i, b[i] = -3 * i;
    reduce2(out.data(), a.data(), b.data(), a.size(), SMD_INT32, SMD_SUM);
    for (int i = 0; i < 100; ++i) ASSERT_EQ(out[i], -2 * i);
    divide(out.data(), out.size(), SMD_INT32, 4);
    for (int i = 0; i < 100; ++i) ASSERT_EQ(out[i], -2 * i / 4);
    std::vector<float> f(33, 3.0f);
    divide(f.data(), f.size(), SMD_FLOAT32, 2);
    for (const float x : f) ASSERT_EQ(x, 1.5f);
    reduce2(a.data(), a.data(), a.data(), a.size(), SMD_INT32, SMD_PROD);
    for (int i = 0; i < 100; ++i) ASSERT_EQ(a[i], i * i);
  }
}

TEST(Reduce, AvgIsSumWithTheDivisor) {
  std::vector<double> a(9, 1.0), b(9, 4.0), out(9);
  const void *srcs[] = {a.data(), b.data()};
  reduce(out.data(), srcs, 2, out.size(), SMD_FLOAT64, SMD_AVG, 2);
  for (const double x : out) EXPECT_EQ(x, 2.5);
}

TEST(Reduce, SingleInputWithoutDivisorCopies) {
  std::vector<uint16_t> in = {0x7c01, 0x7d00, 0x1234}, out(3);
  const void *srcs[] = {in.data()};
  reduce(out.data(), srcs, 1, in.size(), SMD_FLOAT16, SMD_MAX, 1);
  EXPECT_EQ(in, out) << "a copy keeps even signalling NaNs as they are";
}

TEST(Reduce, CountZeroTouchesNothing) {
  const void *srcs[] = {nullptr, nullptr};
  reduce(nullptr, srcs, 2, 0, SMD_FLOAT32, SMD_SUM, 1);
}

TEST(Reduce, RejectsBadArguments) {
  float x = 0;
  const void *srcs[] = {&x};
  EXPECT_THROW(reduce(&x, srcs, 1, 1, smd_datatype_t(SMD_DATATYPE_COUNT), SMD_SUM, 1), Error);
  EXPECT_THROW(reduce(&x, srcs, 1, 1, SMD_FLOAT32, smd_op_t(SMD_OP_COUNT), 1), Error);
  EXPECT_THROW(reduce(&x, srcs, 0, 1, SMD_FLOAT32, SMD_SUM, 1), Error);
}

TEST(Reduce, ImplementationFollowsTheCpu) {
  force_portable(true);
  EXPECT_STREQ(implementation(), "portable");
  force_portable(false);
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax, ebx, ecx = 0, edx;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
  const bool avx2 = f16c && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  EXPECT_STREQ(implementation(), avx2 ? "avx2+f16c" : "portable");
  if (!avx2) std::printf("no AVX2/F16C/FMA here: only the portable kernels ran\n");
#else
  EXPECT_STREQ(implementation(), "portable");
#endif
}

}  // namespace
}  // namespace smd::reduce
