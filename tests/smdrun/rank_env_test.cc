// Unit tests of rank placement and the rank environment.
#include <gtest/gtest.h>

#include <algorithm>

#include "rank_env.h"

namespace smdrun {
namespace {

TEST(SmdrunRankEnv, WithoutNodesTheMachineIsOneNode) {
  Placement p = place_rank(5, 8, std::nullopt);
  EXPECT_FALSE(p.node);
  EXPECT_EQ(p.local_rank, 5);
  EXPECT_EQ(p.local_size, 8);
}

TEST(SmdrunRankEnv, NodesAreBlocksOfCeilNOverK) {
  // 7 ranks on 3 nodes: blocks of 3, 3, 1.
  const int node[] = {0, 0, 0, 1, 1, 1, 2};
  const int local[] = {0, 1, 2, 0, 1, 2, 0};
  const int size[] = {3, 3, 3, 3, 3, 3, 1};
  for (int r = 0; r < 7; ++r) {
    Placement p = place_rank(r, 7, 3);
    EXPECT_EQ(p.node, node[r]) << r;
    EXPECT_EQ(p.local_rank, local[r]) << r;
    EXPECT_EQ(p.local_size, size[r]) << r;
  }
  // More nodes than ranks: one rank per node.
  EXPECT_EQ(place_rank(1, 2, 5).node, 1);
  EXPECT_EQ(place_rank(1, 2, 5).local_size, 1);
}

TEST(SmdrunRankEnv, OurVariablesReplaceInheritedOnes) {
  JobSpec job;
  job.world_size = 4;
  job.nodes = 2;
  job.master_addr = "10.1.2.3";
  job.master_port = 4242;
  job.token = "abc";
  std::vector<std::string> env =
      rank_environment(job, 3, {"PATH=/bin", "RANK=0", "SMD_NODE_ID=x", "RANKS=keep"});
  auto has = [&](const std::string &e) { return std::count(env.begin(), env.end(), e) == 1; };
  for (const char *e :
       {"PATH=/bin", "RANKS=keep", "SMD_RANK=3", "RANK=3", "SMD_WORLD_SIZE=4", "WORLD_SIZE=4",
        "SMD_LOCAL_RANK=1", "LOCAL_RANK=1", "SMD_LOCAL_SIZE=2", "LOCAL_WORLD_SIZE=2",
        "SMD_MASTER_ADDR=10.1.2.3", "MASTER_ADDR=10.1.2.3", "SMD_MASTER_PORT=4242",
        "MASTER_PORT=4242", "SMD_JOB_TOKEN=abc", "SMD_NODE_ID=node1"})
    EXPECT_TRUE(has(e)) << e;
  EXPECT_EQ(env.size(), 16u);
}

}  // namespace
}  // namespace smdrun
