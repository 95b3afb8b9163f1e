// float16/bfloat16 conversions (src/core/reduce/half.h) against the
// reference of reference.h: every 16-bit value, every rounding boundary
// between neighbours, and the special cases by name.
#include "core/reduce/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "reference.h"

namespace smd::reduce {
namespace {

namespace ref = reference;
using ref::bits_of;
using ref::float_of;

// One of the two formats, with the functions under test.
struct Codec {
  const char *name;
  ref::Format format;
  float (*to_float)(uint16_t);
  uint16_t (*from_float)(float);
};

const Codec kCodecs[] = {
    {"float16", ref::kHalf, half_to_float, float_to_half},
    {"bfloat16", ref::kBfloat16, bfloat16_to_float, float_to_bfloat16},
};

class HalfTest : public testing::TestWithParam<Codec> {};

TEST_P(HalfTest, EveryValueWidensExactly) {
  const Codec &c = GetParam();
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = c.to_float(uint16_t(h));
    if (ref::is_nan(c.format, uint16_t(h))) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      EXPECT_EQ(bits_of(f) >> 31, h >> 15) << "NaN keeps its sign " << std::hex << h;
    } else {
      ASSERT_EQ(double(f), ref::to_double(c.format, uint16_t(h))) << std::hex << h;
      ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << h;
    }
  }
}

TEST_P(HalfTest, EveryValueRoundTrips) {
  const Codec &c = GetParam();
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint16_t back = c.from_float(c.to_float(uint16_t(h)));
    if (ref::is_nan(c.format, uint16_t(h))) {
      // Stays a NaN, made quiet, sign and top payload kept.
      ASSERT_EQ(back, uint16_t(h | c.format.quiet_bit())) << std::hex << h;
    } else {
      ASSERT_EQ(back, h) << std::hex << h;
    }
  }
}

// Around each midpoint between neighbouring values: the midpoint itself
// (a tie), and the floats just below and above it.
TEST_P(HalfTest, RoundsEveryBoundaryToNearestEven) {
  const Codec &c = GetParam();
  const uint16_t top = c.format.exponent_mask();  // +infinity
  for (uint32_t h = 0; h < top; ++h) {
    const double lo = ref::to_double(c.format, uint16_t(h));
    const double hi = h + 1 == top ? 2 * lo - ref::to_double(c.format, uint16_t(h - 1))
                                   : ref::to_double(c.format, uint16_t(h + 1));
    const float mid = float((lo + hi) / 2);
    ASSERT_EQ(double(mid), (lo + hi) / 2) << "midpoints are floats";
    const uint32_t m = bits_of(mid);
    for (const uint32_t u : {m - 1, m, m + 1}) {
      for (const uint32_t sign : {0u, 0x80000000u}) {
        const float f = float_of(u | sign);
        ASSERT_EQ(c.from_float(f), ref::from_float(c.format, f))
            << c.name << " of " << std::hexfloat << f;
      }
    }
    if (h + 1 < top) {
      // Ties go to the even neighbour.
      const uint16_t even = (h & 1) ? uint16_t(h + 1) : uint16_t(h);
      ASSERT_EQ(c.from_float(mid), even) << std::hexfloat << mid;
    }
  }
}

TEST_P(HalfTest, RandomFloats) {
  const Codec &c = GetParam();
  std::mt19937 rng(7);
  for (int i = 0; i < 2000000; ++i) {
    const float f = float_of(uint32_t(rng()));
    const uint16_t got = c.from_float(f);
    const uint16_t want = ref::from_float(c.format, f);
    ASSERT_EQ(got, want) << c.name << " of " << std::hexfloat << f;
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, HalfTest, testing::ValuesIn(kCodecs),
                         [](const auto &info) { return info.param.name; });

TEST(Float16, NamedCases) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(float_to_half(0.0f), 0x0000);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);    // largest finite
  EXPECT_EQ(float_to_half(65519.996f), 0x7bff);  // just under the tie
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);    // tie: to even = inf
  EXPECT_EQ(float_to_half(1e9f), 0x7c00);
  EXPECT_EQ(float_to_half(-1e9f), 0xfc00);
  EXPECT_EQ(float_to_half(inf), 0x7c00);
  EXPECT_EQ(float_to_half(-inf), 0xfc00);
  EXPECT_EQ(float_to_half(0x1p-14f), 0x0400);  // smallest normal
  EXPECT_EQ(float_to_half(0x1p-24f), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half(0x1p-25f), 0x0000);  // tie: to even = 0
  EXPECT_EQ(float_to_half(0x1.000002p-25f), 0x0001);
  EXPECT_EQ(float_to_half(0x3p-25f), 0x0002);         // 1.5 units: to even = 2
  EXPECT_EQ(float_to_half(0x5p-25f), 0x0002);         // 2.5 units: to even = 2
  EXPECT_EQ(float_to_half(0x1.ffcp-15f), 0x0400);     // 1023.5 units: to normal
  EXPECT_EQ(float_to_half(0x1p-149f), 0x0000);        // float32 subnormal
  EXPECT_EQ(float_to_half(1.0f + 0x1p-11f), 0x3c00);  // tie: to even
  EXPECT_EQ(float_to_half(1.0f + 0x3p-11f), 0x3c02);  // tie: to even (up)
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::quiet_NaN()) & 0x7e00, 0x7e00);
  EXPECT_EQ(float_to_half(float_of(0x7f800001u)), 0x7e00);  // sNaN: quiet
  EXPECT_EQ(float_to_half(float_of(0xffa00000u)), 0xff00);  // payload kept
  EXPECT_EQ(bits_of(half_to_float(0x7c01)), 0x7fc02000u);   // sNaN: quiet
  EXPECT_EQ(half_to_float(0x0001), 0x1p-24f);
  EXPECT_EQ(half_to_float(0x03ff), 0x3ffp-24f);
  EXPECT_EQ(half_to_float(0xfbff), -65504.0f);
  EXPECT_EQ(half_to_float(0x7c00), inf);
}

TEST(Bfloat16, NamedCases) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(float_to_bfloat16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bfloat16(-0.0f), 0x8000);
  EXPECT_EQ(float_to_bfloat16(float_of(0x3f808000u)), 0x3f80);  // tie: even
  EXPECT_EQ(float_to_bfloat16(float_of(0x3f818000u)), 0x3f82);  // tie: even
  EXPECT_EQ(float_to_bfloat16(float_of(0x3f808001u)), 0x3f81);
  EXPECT_EQ(float_to_bfloat16(float_of(0x7f7fffffu)), 0x7f80);  // to inf
  EXPECT_EQ(float_to_bfloat16(float_of(0x7f7f7fffu)), 0x7f7f);
  EXPECT_EQ(float_to_bfloat16(float_of(0xff7fffffu)), 0xff80);
  EXPECT_EQ(float_to_bfloat16(inf), 0x7f80);
  EXPECT_EQ(float_to_bfloat16(float_of(0x00008000u)), 0x0000);  // subnormal tie
  EXPECT_EQ(float_to_bfloat16(float_of(0x00018000u)), 0x0002);
  EXPECT_EQ(float_to_bfloat16(float_of(0x007fffffu)), 0x0080);  // into normal
  EXPECT_EQ(float_to_bfloat16(float_of(0x7f800001u)), 0x7fc0);  // sNaN: quiet
  EXPECT_EQ(float_to_bfloat16(float_of(0xffc12345u)), 0xffc1);
  EXPECT_EQ(bits_of(bfloat16_to_float(0x7f81)), 0x7f810000u);
  EXPECT_EQ(bfloat16_to_float(0x0001), 0x1p-133f);
}

}  // namespace
}  // namespace smd::reduce
