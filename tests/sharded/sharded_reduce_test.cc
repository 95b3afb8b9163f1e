// Sharded parameter sets, gradients: reduce_grads equals a full allreduce
// sliced to the rank's shard (sum, average, small buckets, persistent
// parameters, 16-bit wire types, in parts), clipping equals the unsharded
// norm, and an SDP group with replicas averages over both.
#include "sharded_set.h"

using namespace shardedtest;

namespace {

struct GradCase {
  bool average;
  int wire;  // -1 or a 16-bit type
  uint64_t bucket;
  uint64_t threshold;
  // Reduced in these parts (smd_sharded_reduce_grads_part, nonblocking,
  // then smd_sharded_reduce_grads of nothing), or all in one call when empty.
  std::vector<std::vector<int32_t>> parts = {};
};

// Every rank's gradients reduced by the set equal a full allreduce of them,
// sliced to the rank's shard.
void check_reduce_grads(const GradCase &g) {
  smd_sharded_config_t c = config(1000000000, g.threshold);
  c.average_gradients = g.average;
  c.gradient_wire_dtype = g.wire;
  c.reduce_bucket_size = g.bucket;
  Set s;
  make(s, c, kCounts);
  RankGrads grads(kCounts);
  const auto &ptrs = grads.ptrs;
  if (g.parts.empty()) {
    SMD_OK(
        smd_sharded_reduce_grads(s.set, s.ids.data(), s.ids.size(), ptrs.data(), nullptr, nullptr));
  } else {
    std::vector<smd_request_t *> requests;
    for (const auto &part : g.parts) {
      std::vector<const void *> part_ptrs;
      for (int32_t id : part) part_ptrs.push_back(ptrs[size_t(id)]);
      smd_request_t *r = nullptr;
      SMD_OK(smd_sharded_reduce_grads_part(s.set, part.data(), part.size(), part_ptrs.data(),
                                           nullptr, &r));
      requests.push_back(r);
    }
    SMD_OK(smd_sharded_reduce_grads(s.set, nullptr, 0, nullptr, nullptr, nullptr));
    for (smd_request_t *r : requests) {
      SMD_OK(smd_request_wait(r));
      SMD_OK(smd_request_free(r));
    }
  }
  double tol = g.wire == SMD_FLOAT16 ? 2e-3 : g.wire == SMD_BFLOAT16 ? 1.6e-2 : 0;
  for (size_t p = 0; p < kCounts.size(); ++p) {
    std::vector<float> want(kCounts[p]);
    SMD_OK(smd_allreduce(grads[p].data(), want.data(), want.size(), SMD_FLOAT32,
                         g.average ? SMD_AVG : SMD_SUM, world(), nullptr));
    void *data = nullptr, *shard = nullptr;
    size_t count = 0, offset = 0;
    int persistent = 0;
    SMD_OK(smd_sharded_grad(s.set, int32_t(p), &data, &count));
    SMD_OK(smd_sharded_shard(s.set, int32_t(p), &shard, nullptr, &offset, &persistent));
    const float *got = static_cast<const float *>(data);
    for (size_t i = 0; i < count; ++i) {
      float w = offset + i < kCounts[p] ? want[offset + i] : 0.0f;
      ASSERT_NEAR(got[i], w, tol * (1 + std::fabs(w))) << "parameter " << p << " element " << i;
    }
  }
}

TEST(Sharded, ReduceGradsSumEqualsAllreduceSliced) {
  check_reduce_grads({false, -1, 500000000, 0});
}
TEST(Sharded, ReduceGradsAverageInSmallBuckets) { check_reduce_grads({true, -1, 333, 0}); }
TEST(Sharded, ReduceGradsPersistentAreAllreduced) { check_reduce_grads({true, -1, 100, 1000}); }
TEST(Sharded, ReduceGradsFloat16Wire) { check_reduce_grads({true, SMD_FLOAT16, 2000, 5}); }
TEST(Sharded, ReduceGradsBfloat16Wire) { check_reduce_grads({false, SMD_BFLOAT16, 500000000, 0}); }
TEST(Sharded, ReduceGradsInPartsEqualOneReduction) {
  check_reduce_grads({true, -1, 333, 5, {{5, 4}, {3}, {2, 1, 0}}});
}

// Parts do not end the round: what was gathered stays (a later fetch is a
// cache hit); each gradient is reduced once per round, whichever call.
TEST(Sharded, ReduceGradsPartKeepsTheRound) {
  Set s;
  make(s, config(), {100, 200});
  RankGrads grads({100, 200});
  int32_t first = 0, second = 1;
  SMD_OK(smd_sharded_fetch(s.set, &first, 1, nullptr, nullptr));
  SMD_OK(smd_sharded_release(s.set, &first, 1));
  SMD_OK(smd_sharded_reduce_grads_part(s.set, &second, 1, &grads.ptrs[1], nullptr, nullptr));
  uint64_t hits = stats_of(s).cache_hits;
  SMD_OK(smd_sharded_fetch(s.set, &first, 1, nullptr, nullptr));
  EXPECT_EQ(stats_of(s).cache_hits, hits + 1);
  SMD_OK(smd_sharded_release(s.set, &first, 1));
  EXPECT_EQ(smd_sharded_reduce_grads_part(s.set, &second, 1, &grads.ptrs[1], nullptr, nullptr),
            SMD_ERR_INVALID_USAGE);
  EXPECT_NE(std::string(smd_last_error()).find("already reduced in this round"), std::string::npos)
      << smd_last_error();
  EXPECT_EQ(smd_sharded_reduce_grads(s.set, &second, 1, &grads.ptrs[1], nullptr, nullptr),
            SMD_ERR_INVALID_USAGE);
  SMD_OK(smd_sharded_reduce_grads(s.set, &first, 1, &grads.ptrs[0], nullptr, nullptr));
  EXPECT_EQ(stats_of(s).live_elements, 0u);  // the round ended: gathered copies dropped
  // A new round: both may be reduced again.
  SMD_OK(smd_sharded_reduce_grads_part(s.set, &second, 1, &grads.ptrs[1], nullptr, nullptr));
  SMD_OK(smd_sharded_reduce_grads(s.set, &first, 1, &grads.ptrs[0], nullptr, nullptr));
  EXPECT_EQ(smd_sharded_reduce_grads_part(s.set, &first, 1, nullptr, nullptr, nullptr),
            SMD_ERR_INVALID_ARGUMENT);
}

TEST(Sharded, ClipEqualsTheUnshardedNorm) {
  Set s;
  make(s, config(1000000000, 10), kCounts);  // 1, 7, 3 persistent
  RankGrads grads(kCounts);
  const auto &ptrs = grads.ptrs;
  smd_request_t *req = nullptr;
  SMD_OK(smd_sharded_reduce_grads(s.set, s.ids.data(), s.ids.size(), ptrs.data(), nullptr, &req));
  SMD_OK(smd_request_wait(req));
  SMD_OK(smd_request_free(req));
  double want = 0;
  for (size_t p = 0; p < kCounts.size(); ++p) {
    std::vector<float> full(kCounts[p]);
    SMD_OK(smd_allreduce(grads[p].data(), full.data(), full.size(), SMD_FLOAT32, SMD_AVG, world(),
                         nullptr));
    for (float v : full) want += double(v) * v;
  }
  want = std::sqrt(want);
  double norm = 0;
  SMD_OK(smd_sharded_clip_grads(s.set, 0, &norm));  // 0: measure only
  EXPECT_NEAR(norm, want, 1e-6 * want);
  SMD_OK(smd_sharded_clip_grads(s.set, want / 4, &norm));
  EXPECT_NEAR(norm, want, 1e-6 * want);
  SMD_OK(smd_sharded_clip_grads(s.set, 0, &norm));
  EXPECT_NEAR(norm, want / 4, 1e-5 * want);
  EXPECT_NEAR(stats_of(s).last_grad_norm, want / 4, 1e-5 * want);
}

// dp = sdp x replicas: the shard group is an SDP group of smd_groups_create,
// the replicas the ranks at the same place of the other chunks; gradients
// averaged over both equal the world's average, sliced to the shard.
TEST(Sharded, SdpGroupWithReplicas) {
  if (size() % 2) GTEST_SKIP() << "needs an even number of ranks";
  smd_groups_config_t gc = SMD_GROUPS_CONFIG_INIT;
  gc.sdp = 2;
  smd_groups_t *groups = nullptr;
  SMD_OK(smd_groups_create(world(), &gc, &groups));
  smd_comm_t *sdp = nullptr, *rdp = nullptr, *replicas = nullptr;
  int rdp_rank = -1, sdp_size = 0;
  SMD_OK(smd_groups_comm(groups, SMD_GROUP_SDP, &sdp));
  SMD_OK(smd_groups_comm(groups, SMD_GROUP_RDP, &rdp));
  SMD_OK(smd_groups_rank(groups, SMD_GROUP_RDP, &rdp_rank));
  SMD_OK(smd_groups_size(groups, SMD_GROUP_SDP, &sdp_size));
  ASSERT_EQ(sdp_size, 2);
  SMD_OK(smd_comm_split(rdp, rdp_rank % 2, rdp_rank, &replicas));
  smd_sharded_config_t c = config(1000000000, 0);
  c.replica_comm = replicas;
  c.reduce_bucket_size = 1000;
  smd_sharded_t *set = nullptr;
  SMD_OK(smd_sharded_create(sdp, &c, &set));
  std::vector<int32_t> ids;
  for (size_t p = 0; p < kCounts.size(); ++p) {
    int32_t id = -1;
    SMD_OK(smd_sharded_register(set, kCounts[p], SMD_FLOAT32, nullptr, &id));
    ids.push_back(id);
  }
  RankGrads grads(kCounts);
  SMD_OK(
      smd_sharded_reduce_grads(set, ids.data(), ids.size(), grads.ptrs.data(), nullptr, nullptr));
  for (size_t p = 0; p < kCounts.size(); ++p) {
    std::vector<float> want(kCounts[p]);
    SMD_OK(smd_allreduce(grads[p].data(), want.data(), want.size(), SMD_FLOAT32, SMD_AVG, world(),
                         nullptr));
    void *data = nullptr, *shard = nullptr;
    size_t count = 0, offset = 0;
    SMD_OK(smd_sharded_grad(set, int32_t(p), &data, &count));
    SMD_OK(smd_sharded_shard(set, int32_t(p), &shard, nullptr, &offset, nullptr));
    for (size_t i = 0; i < count && offset + i < kCounts[p]; ++i)
      ASSERT_NEAR(static_cast<const float *>(data)[i], want[offset + i],
                  1e-5 * (1 + std::fabs(want[offset + i])))
          << "parameter " << p << " element " << i;
  }
  SMD_OK(smd_sharded_destroy(set));
  SMD_OK(smd_comm_destroy(replicas));
  SMD_OK(smd_groups_destroy(groups));
}

}  // namespace
