// The arithmetic of digests_agree: a member contributes its digests and
// their complements, and the maxima over the members say "all agree"
// exactly when every member passed the same digests. The exchange itself
// runs with real processes (tests/errors/settings_check.sh, and the
// sharded sets' disagreement tests).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/coll/agree/digest_agreement.h"

namespace {

// The element-wise maximum of the members' bounds: what the allreduce gives.
std::vector<uint64_t> maxima_of(const std::vector<std::vector<uint64_t>> &members) {
  std::vector<uint64_t> m = smd::digest_bounds(members[0]);
  for (const std::vector<uint64_t> &d : members) {
    std::vector<uint64_t> b = smd::digest_bounds(d);
    for (size_t i = 0; i < m.size(); ++i) m[i] = std::max(m[i], b[i]);
  }
  return m;
}

TEST(DigestAgreement, BoundsAreTheDigestsThenTheirComplements) {
  std::vector<uint64_t> b = smd::digest_bounds(std::vector<uint64_t>{5, 0});
  EXPECT_EQ(b, (std::vector<uint64_t>{5, 0, ~uint64_t(5), ~uint64_t(0)}));
}

TEST(DigestAgreement, EqualDigestsAgree) {
  EXPECT_TRUE(smd::bounds_agree(maxima_of({{7, 9}, {7, 9}, {7, 9}})));
  EXPECT_TRUE(smd::bounds_agree(maxima_of({{0}, {0}})));
  EXPECT_TRUE(smd::bounds_agree(maxima_of({{~uint64_t(0)}})));
  EXPECT_TRUE(smd::bounds_agree(maxima_of({{}, {}})));  // nothing to compare
}

TEST(DigestAgreement, AnyDifferenceOnAnyMemberIsSeen) {
  // The lowest, the highest or a middle member differing, in any digest.
  EXPECT_FALSE(smd::bounds_agree(maxima_of({{7, 9}, {7, 9}, {7, 8}})));
  EXPECT_FALSE(smd::bounds_agree(maxima_of({{7, 9}, {8, 9}, {7, 9}})));
  EXPECT_FALSE(smd::bounds_agree(maxima_of({{0}, {~uint64_t(0)}})));
  EXPECT_FALSE(smd::bounds_agree(maxima_of({{3}, {1}, {2}})));
  // Complements of each other are not the same digest.
  EXPECT_FALSE(smd::bounds_agree(maxima_of({{0x0f}, {~uint64_t(0x0f)}})));
}

}  // namespace
