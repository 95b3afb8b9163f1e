// The balanced fusion buffer (src/core/fusion/fusion_layout.h): whatever
// the sizes of the tensors packed into a fused allreduce, the largest
// share any rank reduces is at most one cache line above the smallest, on
// one node and across nodes (each local rank's network link), by the
// shares the engine's split functions give. What the engine then sends
// across nodes for a fused group is measured in
// tests/coll/fusion_balance_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "core/fusion/fusion_layout.h"

using namespace smd;

namespace {

size_t spread_bytes(const std::vector<size_t> &shares, size_t es) {
  auto [lo, hi] = std::minmax_element(shares.begin(), shares.end());
  return (*hi - *lo) * es;
}

std::vector<size_t> random_tensors(std::mt19937 &gen) {
  // 1 to 300 tensors of 1 element to 1 MiB, mostly small, some ragged.
  std::vector<size_t> counts(1 + gen() % 300);
  for (size_t &n : counts) {
    int shape = int(gen() % 4);
    n = shape == 0   ? 1 + gen() % 16
        : shape == 1 ? 1 + gen() % 4096
        : shape == 2 ? 1 + gen() % 65536
                     : 1 + gen() % 262144;
  }
  return counts;
}

TEST(FusionLayout, TensorsLieBackToBackInsideThePaddedBuffer) {
  FusionLayout l = lay_out_fusion({3, 1, 100}, 4, 4);
  EXPECT_EQ(l.offsets, (std::vector<size_t>{0, 3, 4}));
  EXPECT_EQ(l.used, 104u);
  EXPECT_EQ(l.padded, 128u);  // 4 ranks x 16 floats (a cache line each)
  EXPECT_EQ(lay_out_fusion({}, 4, 2).padded, 0u);
}

TEST(FusionLayout, EveryRankReducesAnEqualShareOnOneNode) {
  std::mt19937 gen(7);
  const size_t sizes[] = {1, 2, 4, 8};
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<size_t> counts = random_tensors(gen);
    size_t es = sizes[gen() % 4];
    int ranks = 1 + int(gen() % 16);
    FusionLayout l = lay_out_fusion(counts, es, ranks);
    ASSERT_GE(l.padded, l.used);
    std::vector<size_t> shares = flat_shares(l.padded, ranks, es);
    EXPECT_LE(spread_bytes(shares, es), 64u) << ranks << " ranks, " << counts.size() << " tensors";
  }
}

TEST(FusionLayout, EveryRankAndLinkReducesAnEqualShareAcrossNodes) {
  std::mt19937 gen(11);
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<size_t> counts = random_tensors(gen);
    size_t es = trial % 2 ? 4 : 2;
    int nodes = 2 + int(gen() % 7), local = 1 + int(gen() % 8);
    FusionLayout l = lay_out_fusion(counts, es, nodes * local);
    std::vector<size_t> shares = hier_shares(l.padded, nodes, local, es);
    EXPECT_LE(spread_bytes(shares, es), 64u)
        << nodes << "x" << local << ", " << counts.size() << " tensors";
  }
}

TEST(FusionLayout, UnpaddedRaggedEndsWouldLandOnTheLeaders) {
  // What the padding prevents: 2 nodes x 4 ranks, 1000 floats + 1 left
  // over by the per-member cache-line split go to each node's leader.
  std::vector<size_t> shares = hier_shares(1001, 2, 4, 4);
  EXPECT_GT(spread_bytes(shares, 4), 64u);
}

}  // namespace
