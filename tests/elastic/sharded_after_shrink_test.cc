// Sharded parameters after a shrink, with real processes: 4 ranks hold a
// sharded set, each checkpoints its shards, one is killed with SIGKILL,
// and the survivors rebuild the set on the shrunk communicator the way
// docs/ELASTIC.md says (gather the survivors' shards over the shrunk
// communicator, take the lost rank's shard from its checkpoint, register
// the full parameters anew), then fetch the right full parameters.
#include <gtest/gtest.h>
#include <signal.h>
#include <smd.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "elastic_ranks.h"

namespace {

using namespace elastic_test;

constexpr int kRanks = 4, kLost = 2;
const size_t kCounts[] = {10, 7, 33};  // pieces of 3, 2 and 9 elements: the last ones padded

// The value of element i of parameter p after the "optimizer step" below.
float trained(int p, size_t i) { return float(100 * p) + float(i) + 0.5f; }

std::string checkpoint_path(const std::string &dir, int rank, int p) {
  return dir + "/shard." + std::to_string(rank) + "." + std::to_string(p);
}

smd_sharded_t *make_set(smd_comm_t *comm) {
  smd_sharded_config_t cfg = SMD_SHARDED_CONFIG_INIT;
  cfg.param_persistence_threshold = 0;  // shard everything
  smd_sharded_t *set = nullptr;
  smd_result_t rc = smd_sharded_create(comm, &cfg, &set);
  CHECK_RANK(rc == SMD_SUCCESS, "sharded_create: %s", smd_result_string(rc));
  return set;
}

void fetch_and_check(smd_sharded_t *set, int p) {
  int32_t id = p;
  smd_result_t rc = smd_sharded_fetch(set, &id, 1, nullptr, nullptr);
  CHECK_RANK(rc == SMD_SUCCESS, "fetch %d: %s", p, smd_result_string(rc));
  void *full = nullptr;
  CHECK_RANK(smd_sharded_full(set, id, &full) == SMD_SUCCESS, "full %d", p);
  for (size_t i = 0; i < kCounts[p]; ++i)
    CHECK_RANK(static_cast<float *>(full)[i] == trained(p, i),
               "parameter %d element %zu is %g, want %g", p, i,
               double(static_cast<float *>(full)[i]), double(trained(p, i)));
  CHECK_RANK(smd_sharded_release(set, &id, 1) == SMD_SUCCESS, "release %d", p);
}

void sharded_rank(int r, Job &job, const std::string &dir) {
  smd_comm_t *world = init_world();
  smd_sharded_t *set = make_set(world);
  for (size_t count : kCounts) {
    int32_t id = -1;
    CHECK_RANK(smd_sharded_register(set, count, SMD_FLOAT32, nullptr, &id) == SMD_SUCCESS,
               "register");
  }
  // An "optimizer step" on each shard (padding stays zero), then every
  // rank checkpoints its own shards.
  for (int p = 0; p < 3; ++p) {
    void *data = nullptr;
    size_t n = 0, offset = 0;
    CHECK_RANK(smd_sharded_shard(set, p, &data, &n, &offset, nullptr) == SMD_SUCCESS, "shard");
    float *shard = static_cast<float *>(data);
    for (size_t i = 0; i < n && offset + i < kCounts[p]; ++i) shard[i] = trained(p, offset + i);
    FILE *f = fopen(checkpoint_path(dir, r, p).c_str(), "wb");
    CHECK_RANK(f && fwrite(shard, sizeof(float), n, f) == n && fclose(f) == 0, "checkpoint");
  }
  fetch_and_check(set, 0);  // the set works at 4
  job.arrived.put();
  if (r == kLost) pause();
  int32_t id = 1;
  smd_result_t rc = smd_sharded_fetch(set, &id, 1, nullptr, nullptr);
  CHECK_RANK(rc == SMD_ERR_PEER_FAILURE || rc == SMD_ERR_REVOKED, "fetch with a killed peer: %s",
             smd_result_string(rc));
  smd_comm_revoke(world);
  smd_comm_t *shrunk = nullptr;
  int old_to_new[kRanks];
  rc = smd_comm_shrink(world, &shrunk, old_to_new);
  CHECK_RANK(rc == SMD_SUCCESS, "shrink: %s", smd_result_string(rc));

  // The rebuild: each parameter's full values from the survivors' shards
  // (allgathered over the shrunk communicator, in new-rank order) and the
  // lost rank's checkpoint, placed by old rank.
  std::vector<std::vector<float>> full(3);
  for (int p = 0; p < 3; ++p) {
    void *data = nullptr;
    size_t piece = 0, offset = 0;
    CHECK_RANK(smd_sharded_shard(set, p, &data, &piece, &offset, nullptr) == SMD_SUCCESS, "shard");
    std::vector<float> gathered(piece * (kRanks - 1)), padded(piece * kRanks);
    rc = smd_allgather(data, gathered.data(), piece, SMD_FLOAT32, shrunk, nullptr);
    CHECK_RANK(rc == SMD_SUCCESS, "allgather of shards: %s", smd_result_string(rc));
    for (int old = 0; old < kRanks; ++old) {
      float *dst = padded.data() + size_t(old) * piece;
      if (old_to_new[old] >= 0) {
        std::copy_n(gathered.data() + size_t(old_to_new[old]) * piece, piece, dst);
      } else {
        FILE *f = fopen(checkpoint_path(dir, old, p).c_str(), "rb");
        CHECK_RANK(f && fread(dst, sizeof(float), piece, f) == piece && fclose(f) == 0,
                   "read rank %d's checkpoint", old);
      }
    }
    full[size_t(p)].assign(padded.begin(), padded.begin() + long(kCounts[p]));
  }
  CHECK_RANK(smd_sharded_destroy(set) == SMD_SUCCESS, "destroy the old set: %s", smd_last_error());
  set = make_set(shrunk);
  for (int p = 0; p < 3; ++p) {
    int32_t got = -1;
    CHECK_RANK(smd_sharded_register(set, kCounts[p], SMD_FLOAT32, full[size_t(p)].data(), &got) ==
                   SMD_SUCCESS,
               "register again");
  }
  for (int p = 0; p < 3; ++p) fetch_and_check(set, p);
  // Its shards are the new size's: a third of each parameter, rounded up.
  size_t piece = 0;
  void *data = nullptr;
  smd_sharded_shard(set, 2, &data, &piece, nullptr, nullptr);
  CHECK_RANK(piece == 11, "a shard of 33 elements over 3 ranks has %zu", piece);
  CHECK_RANK(smd_sharded_destroy(set) == SMD_SUCCESS, "destroy the new set");
  arrive_and_leave(job, shrunk, world);
}

TEST(ElasticSharded, SurvivorsRebuildTheSetFromTheirShardsAndTheLostRanksCheckpoint) {
  for (const Transport &t : transports()) {
    SCOPED_TRACE(t.name);
    TempDir checkpoints{"smd-sharded-ckpt"};
    ASSERT_FALSE(checkpoints.path.empty()) << "mkdtemp failed";
    const char *dir = checkpoints.path.c_str();
    Job job;
    job.start(kRanks, t.env, t.ranks_per_node, [&](int r) { sharded_rank(r, job, dir); });
    ASSERT_TRUE(job.await_arrivals(kRanks)) << "a rank failed before the kill";
    job.kill_rank(kLost);
    EXPECT_TRUE(job.await_arrivals(kRanks - 1)) << "a survivor failed (its status below)";
    job.leave.p.close_writer();
    for (int r = 0; r < kRanks; ++r) {
      if (r != kLost) {
        EXPECT_EQ(job.finish(r), 0) << "rank " << r;
      }
    }
  }
}

}  // namespace
