// The balanced fusion buffer as the engine runs it across nodes: a group
// of allreduces of ragged sizes, fused into one hierarchical allreduce,
// makes every rank send the same bytes to the other nodes (within a cache
// line), read back from smd_comm_get_stats on every rank. The same
// tensors as separate calls leave each one's ragged end to the node
// leaders, which the same measure sees. Run under smdrun --nodes with
// several ranks per node (tests/tcp).
#include <gtest/gtest.h>
#include <smd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "mp_env.h"

using mptest::rank;
using mptest::size;
using mptest::world;

namespace {

// Ragged sizes (none a multiple of a cache line per rank), about 720 KB in
// all: enough for the hierarchy's slices to carry the whole buffer.
const std::vector<size_t> kCounts = {1, 7, 1000, 10007, 3, 4096, 65537, 100003, 33};

smd_comm_stats_t stats() {
  smd_comm_stats_t s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  EXPECT_EQ(smd_comm_get_stats(world(), &s), SMD_SUCCESS) << smd_last_error();
  return s;
}

struct Sent {
  uint64_t least = 0, most = 0;
  std::string algorithm;
};

// Runs the allreduces (in one group when `fused`), checks their sums, and
// returns the least and most any rank sent across nodes meanwhile.
Sent run(bool fused) {
  std::vector<std::vector<float>> bufs;
  for (size_t n : kCounts) bufs.emplace_back(n, float(rank() + 1));
  uint64_t before = stats().inter_node_bytes_sent;
  if (fused) {
    EXPECT_EQ(smd_group_start(), SMD_SUCCESS);
  }
  for (auto &b : bufs)
    EXPECT_EQ(smd_allreduce(b.data(), b.data(), b.size(), SMD_FLOAT32, SMD_SUM, world(), nullptr),
              SMD_SUCCESS)
        << smd_last_error();
  if (fused) {
    EXPECT_EQ(smd_group_end(), SMD_SUCCESS) << smd_last_error();
  }
  smd_comm_stats_t after = stats();
  Sent s;
  s.algorithm = after.last_algorithm;
  uint64_t mine = after.inter_node_bytes_sent - before;
  EXPECT_EQ(smd_allreduce(&mine, &s.least, 1, SMD_UINT64, SMD_MIN, world(), nullptr), SMD_SUCCESS);
  EXPECT_EQ(smd_allreduce(&mine, &s.most, 1, SMD_UINT64, SMD_MAX, world(), nullptr), SMD_SUCCESS);
  const float want = float(size()) * float(size() + 1) / 2;
  for (const auto &b : bufs) {
    EXPECT_EQ(b.front(), want);
    EXPECT_EQ(b.back(), want);
  }
  return s;
}

TEST(FusionBalance, FusedRaggedAllreducesSendEqualSharesAcrossNodes) {
  int nodes = 1, local = 1, lo = 0;
  SMD_OK(smd_comm_node_count(world(), &nodes));
  SMD_OK(smd_comm_local_size(world(), &local));
  SMD_OK(smd_allreduce(&local, &lo, 1, SMD_INT32, SMD_MIN, world(), nullptr));
  ASSERT_GE(nodes, 2) << "run under smdrun --nodes";
  ASSERT_GE(local, 2) << "needs several ranks per node";
  ASSERT_EQ(lo, local) << "needs as many ranks on every node";

  Sent fused = run(true);
  SCOPED_TRACE("fused: " + fused.algorithm + ", " + std::to_string(fused.least) + " to " +
               std::to_string(fused.most) + " B across nodes");
  EXPECT_EQ(fused.algorithm, "hierarchical");
  EXPECT_GT(fused.least, 0u);
  EXPECT_LE(fused.most - fused.least, 64u);

  // The check can fail: unfused, the leaders carry the ragged ends.
  Sent separate = run(false);
  SCOPED_TRACE("separate: " + std::to_string(separate.least) + " to " +
               std::to_string(separate.most) + " B across nodes");
  EXPECT_GT(separate.most - separate.least, 64u);
}

}  // namespace

int main(int argc, char **argv) {
  mptest::install(&argc, argv);
  return RUN_ALL_TESTS();
}
