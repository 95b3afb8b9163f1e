// The one FNV-1a against the published test vectors (the FNV authors'
// test suite: "", "a", "foobar"), fed whole and in pieces.
#include <gtest/gtest.h>

#include <cstdint>

#include "core/util/fnv1a.h"

using namespace smd;

TEST(Fnv1a, SixtyFourBitsMatchesThePublishedVectors) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ull);
}

TEST(Fnv1a, ThirtyTwoBitsMatchesThePublishedVectors) {
  EXPECT_EQ(fnv1a32(""), 0x811c9dc5u);
  EXPECT_EQ(fnv1a32("a"), 0xe40c292cu);
  EXPECT_EQ(fnv1a32("foobar"), 0xbf9cf968u);
}

TEST(Fnv1a, PiecesHashAsTheirConcatenation) {
  Fnv1a64 h;
  h.mix_text("foo").mix_bytes("ba", 2).mix_byte('r');
  EXPECT_EQ(h.value(), fnv1a64("foobar"));
}

TEST(Fnv1a, AWordIsItsBytesLeastSignificantFirst) {
  uint64_t v = 0x0102030405060708ull;
  const unsigned char bytes[8] = {8, 7, 6, 5, 4, 3, 2, 1};
  EXPECT_EQ(Fnv1a64().mix_u64(v).value(), Fnv1a64().mix_bytes(bytes, 8).value());
}

TEST(Fnv1a, FoldedIsTheHalvesXored) {
  uint64_t h = fnv1a64("foobar");
  Fnv1a64 f;
  f.mix_text("foobar");
  EXPECT_EQ(f.folded32(), static_cast<uint32_t>(h ^ (h >> 32)));
}

// Usable where a constant is needed (a digest of a fixed name).
static_assert(fnv1a64("a") == 0xaf63dc4c8601ec8cull);
