// Going on after a lost rank, with real processes: a rank is killed with
// SIGKILL (never asked to leave), and the survivors revoke, agree, shrink
// and run collectives at the new size. Ranks are forked from this test
// (before any smd call here) and report through their exit status; the
// test orders their steps with pipes, never with sleeps.
#include <fcntl.h>
#include <poll.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <smd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "elastic_ranks.h"

namespace {

using namespace elastic_test;

// Rank 2 of 4 is killed while the others are in an allreduce; every
// survivor sees the loss, revokes, agrees on the failed set, shrinks to 3
// and reduces correctly at 3.
void survivor(int r, int ranks_per_node, Job &job) {
  smd_comm_t *world = init_world();
  expect_sum(world, r, 0 + 1 + 2 + 3);
  // Killed once every rank has its result (tcp drops data that a killed
  // peer sent but this rank had not read yet).
  job.arrived.put();
  if (r == 2) pause();
  int64_t v = 1, out = 0;
  smd_result_t rc = smd_allreduce(&v, &out, 1, SMD_INT64, SMD_SUM, world, nullptr);
  CHECK_RANK(rc == SMD_ERR_PEER_FAILURE || rc == SMD_ERR_REVOKED,
             "allreduce with a killed peer ended with %s", smd_result_string(rc));
  CHECK_RANK(smd_comm_revoke(world) == SMD_SUCCESS, "revoke");
  rc = smd_allreduce(&v, &out, 1, SMD_INT64, SMD_SUM, world, nullptr);
  CHECK_RANK(rc == SMD_ERR_REVOKED, "a call after revoke ended with %s", smd_result_string(rc));

  smd_comm_t *shrunk = nullptr;
  int old_to_new[4];
  rc = smd_comm_shrink(world, &shrunk, old_to_new);
  CHECK_RANK(rc == SMD_SUCCESS, "shrink: %s", smd_result_string(rc));
  CHECK_RANK(old_to_new[0] == 0 && old_to_new[1] == 1 && old_to_new[2] == -1 && old_to_new[3] == 2,
             "old_to_new %d %d %d %d", old_to_new[0], old_to_new[1], old_to_new[2], old_to_new[3]);
  int size = 0, me = -1, world_rank = -1;
  smd_comm_size(shrunk, &size);
  smd_comm_rank(shrunk, &me);
  CHECK_RANK(size == 3 && me == old_to_new[r], "new size %d rank %d", size, me);
  smd_comm_world_rank(shrunk, me, &world_rank);
  CHECK_RANK(world_rank == r, "world rank %d", world_rank);
  // The node structure is the survivors': with two nodes of two, rank 3
  // is alone on the second node now.
  int nodes = 0, node = -1, local_size = 0;
  smd_comm_node_count(shrunk, &nodes);
  smd_comm_node_index(shrunk, &node);
  smd_comm_local_size(shrunk, &local_size);
  int want_nodes = ranks_per_node == 0 ? 1 : ranks_per_node == 1 ? 3 : 2;
  int want_local = ranks_per_node == 0 ? 3 : ranks_per_node == 1 ? 1 : r == 3 ? 1 : 2;
  CHECK_RANK(nodes == want_nodes && local_size == want_local,
             "%d nodes (want %d), %d local (want %d)", nodes, want_nodes, local_size, want_local);
  expect_sum(shrunk, r, 0 + 1 + 3);
  expect_sum(shrunk, me + 1, 1 + 2 + 3);
  // A larger reduction, so that ring or hierarchical algorithms run too.
  std::vector<float> big(1 << 16, float(me + 1)), sum(big.size());
  rc = smd_allreduce(big.data(), sum.data(), big.size(), SMD_FLOAT32, SMD_SUM, shrunk, nullptr);
  CHECK_RANK(rc == SMD_SUCCESS, "big allreduce: %s", smd_result_string(rc));
  for (float x : sum) CHECK_RANK(x == 6.0f, "big allreduce element %g", double(x));
  if (ranks_per_node == 2) {  // the node and rail sub-communicators were built from the survivors
    smd_comm_stats_t stats{};
    stats.struct_size = sizeof stats;
    smd_comm_get_stats(shrunk, &stats);
    CHECK_RANK(std::string(stats.last_algorithm) == "hierarchical", "algorithm %s",
               stats.last_algorithm);
  }

  // Rank groups (dp, tp, pp, ...) form on the shrunk communicator as on a
  // world: 3 ranks, tp = pp = 1, so dp has all three.
  smd_groups_config_t cfg = SMD_GROUPS_CONFIG_INIT;
  smd_groups_t *groups = nullptr;
  rc = smd_groups_create(shrunk, &cfg, &groups);
  CHECK_RANK(rc == SMD_SUCCESS, "groups on the shrunk communicator: %s", smd_result_string(rc));
  smd_comm_t *dp = nullptr;
  rc = smd_groups_comm(groups, SMD_GROUP_DP, &dp);
  CHECK_RANK(rc == SMD_SUCCESS, "dp: %s", smd_result_string(rc));
  expect_sum(dp, r, 0 + 1 + 3);
  CHECK_RANK(smd_groups_destroy(groups) == SMD_SUCCESS, "destroy groups");

  // The survivors agree again on the old communicator: the AND of their
  // flags (each clears its own bit) and the same failed set.
  uint32_t flag = ~(1u << r);
  int failed[4] = {-1, -1, -1, -1}, nfailed = -1;
  rc = smd_comm_agree(world, &flag, failed, 4, &nfailed);
  CHECK_RANK(rc == SMD_SUCCESS, "agree: %s", smd_result_string(rc));
  CHECK_RANK(flag == ~((1u << 0) | (1u << 1) | (1u << 3)), "agreed flag %#x", flag);
  CHECK_RANK(nfailed == 1 && failed[0] == 2, "agreed %d failed, first %d", nfailed, failed[0]);
  arrive_and_leave(job, shrunk, world);
}

TEST(Elastic, SurvivorsShrinkAfterAKilledRankAndReduceAtTheNewSize) {
  for (const Transport &t : with_network_plugins()) {
    SCOPED_TRACE(t.name);
    Job job;
    job.start(4, t.env, t.ranks_per_node, [&](int r) { survivor(r, t.ranks_per_node, job); });
    ASSERT_TRUE(job.await_arrivals(4)) << "a rank failed before the kill";
    job.kill_rank(2);
    EXPECT_EQ(job.finish(2), -SIGKILL);
    EXPECT_TRUE(job.await_arrivals(3)) << "a survivor failed (its status below)";
    job.leave.p.close_writer();
    for (int r : {0, 1, 3}) EXPECT_EQ(job.finish(r), 0) << "rank " << r;
  }
}

// World rank 0 is killed; with a store of their own the survivors shrink
// to 3 (ranks 1, 2, 3 become 0, 1, 2) and reduce.
void rank0_lost(int r, Job &job, FileStore &store) {
  smd_comm_t *world = init_world(store);
  expect_sum(world, r, 0 + 1 + 2 + 3);
  job.arrived.put();
  if (r == 0) pause();
  int64_t v = 1, out = 0;
  smd_result_t rc = smd_allreduce(&v, &out, 1, SMD_INT64, SMD_SUM, world, nullptr);
  CHECK_RANK(rc == SMD_ERR_PEER_FAILURE || rc == SMD_ERR_REVOKED, "allreduce: %s",
             smd_result_string(rc));
  smd_comm_revoke(world);
  smd_comm_t *shrunk = nullptr;
  int old_to_new[4];
  rc = smd_comm_shrink(world, &shrunk, old_to_new);
  CHECK_RANK(rc == SMD_SUCCESS, "shrink: %s", smd_result_string(rc));
  CHECK_RANK(old_to_new[0] == -1 && old_to_new[r] == r - 1, "old_to_new %d, mine %d", old_to_new[0],
             old_to_new[r]);
  expect_sum(shrunk, r, 1 + 2 + 3);
  uint32_t flag = 1;
  int failed[4], nfailed = 0;
  rc = smd_comm_agree(world, &flag, failed, 4, &nfailed);
  CHECK_RANK(rc == SMD_SUCCESS && flag == 1 && nfailed == 1 && failed[0] == 0,
             "agree: %s, %d failed", smd_result_string(rc), nfailed);
  arrive_and_leave(job, shrunk, world);
}

TEST(Elastic, WithAnInjectedStoreLosingWorldRankZeroIsSurvivable) {
  for (const Transport &t : transports()) {
    SCOPED_TRACE(t.name);
    FileStore store;
    ASSERT_FALSE(store.dir.empty()) << "mkdtemp failed";
    Job job;
    job.start(4, t.env, t.ranks_per_node, [&](int r) { rank0_lost(r, job, store); });
    ASSERT_TRUE(job.await_arrivals(4)) << "a rank failed before the kill";
    job.kill_rank(0);
    EXPECT_TRUE(job.await_arrivals(3)) << "a survivor failed (its status below)";
    job.leave.p.close_writer();
    for (int r : {1, 2, 3}) EXPECT_EQ(job.finish(r), 0) << "rank " << r;
  }
}

// Faults during recovery: rank 2 is killed, then rank 3 while the others
// shrink (it never votes): the two left agree on both and go on at 2.
void second_death(int r, Job &job) {
  smd_comm_t *world = init_world();
  expect_sum(world, r, 0 + 1 + 2 + 3);
  job.arrived.put();
  if (r == 2) pause();
  int64_t v = 1, out = 0;
  smd_result_t rc = smd_allreduce(&v, &out, 1, SMD_INT64, SMD_SUM, world, nullptr);
  CHECK_RANK(rc == SMD_ERR_PEER_FAILURE || rc == SMD_ERR_REVOKED, "allreduce: %s",
             smd_result_string(rc));
  smd_comm_revoke(world);
  job.arrived.put();
  if (r == 3) pause();  // killed while ranks 0 and 1 shrink
  smd_comm_t *shrunk = nullptr;
  int old_to_new[4];
  rc = smd_comm_shrink(world, &shrunk, old_to_new);
  CHECK_RANK(rc == SMD_SUCCESS, "shrink: %s", smd_result_string(rc));
  CHECK_RANK(old_to_new[0] == 0 && old_to_new[1] == 1 && old_to_new[2] == -1 && old_to_new[3] == -1,
             "old_to_new %d %d %d %d", old_to_new[0], old_to_new[1], old_to_new[2], old_to_new[3]);
  expect_sum(shrunk, r + 1, 1 + 2);
  arrive_and_leave(job, shrunk, world);
}

TEST(Elastic, SecondRankDyingDuringTheShrinkIsLeftOutToo) {
  for (const Transport &t : transports()) {
    SCOPED_TRACE(t.name);
    Job job;
    job.start(4, t.env, t.ranks_per_node, [&](int r) { second_death(r, job); });
    ASSERT_TRUE(job.await_arrivals(4)) << "a rank failed before the first kill";
    job.kill_rank(2);
    ASSERT_TRUE(job.await_arrivals(3)) << "a survivor failed before the second kill";
    job.kill_rank(3);
    EXPECT_TRUE(job.await_arrivals(2)) << "rank 0 or 1 failed (its status below)";
    job.leave.p.close_writer();
    for (int r : {0, 1}) EXPECT_EQ(job.finish(r), 0) << "rank " << r;
  }
}

// The store's host (world rank 0) is killed: the survivors' shrink ends
// with SMD_ERR_PEER_FAILURE naming the lost store, not a hang.
void store_lost(int r, Job &job) {
  smd_comm_t *world = init_world();
  expect_sum(world, r, 0 + 1 + 2);
  job.arrived.put();
  if (r == 0) pause();
  int64_t v = 1, out = 0;
  smd_result_t rc = smd_allreduce(&v, &out, 1, SMD_INT64, SMD_SUM, world, nullptr);
  CHECK_RANK(rc != SMD_SUCCESS, "allreduce without rank 0 succeeded");
  smd_comm_revoke(world);
  smd_comm_t *shrunk = nullptr;
  rc = smd_comm_shrink(world, &shrunk, nullptr);
  CHECK_RANK(rc == SMD_ERR_PEER_FAILURE && strstr(smd_last_error(), "store") != nullptr,
             "shrink without the store: %s", smd_result_string(rc));
  arrive_and_leave(job, nullptr, world);
}

TEST(Elastic, LosingTheStoresHostEndsTheShrinkWithAClearError) {
  Transport t = transports()[0];
  Job job;
  job.start(3, t.env, t.ranks_per_node, [&](int r) { store_lost(r, job); });
  ASSERT_TRUE(job.await_arrivals(3)) << "a rank failed before the kill";
  job.kill_rank(0);
  EXPECT_TRUE(job.await_arrivals(2)) << "rank 1 or 2 failed (its status below)";
  job.leave.p.close_writer();
  for (int r : {1, 2}) EXPECT_EQ(job.finish(r), 0) << "rank " << r;
}

// A member that is alive but later than SMD_TIMEOUT to an agreement is
// declared failed by the others, and its own call then fails instead of
// answering differently.
void late_member(int r, Job &job, Pipe &go) {
  smd_comm_t *world = init_world();
  expect_sum(world, r, 0 + 1 + 2);
  uint32_t flag = 1;
  int failed[3], nfailed = 0;
  if (r == 2) CHECK_RANK(go.take(), "the test's go");  // after the others have agreed
  smd_result_t rc = smd_comm_agree(world, &flag, failed, 3, &nfailed);
  if (r == 2) {
    CHECK_RANK(rc == SMD_ERR_PEER_FAILURE && strstr(smd_last_error(), "declared this rank failed"),
               "a late agree: %s", smd_result_string(rc));
  } else {
    CHECK_RANK(rc == SMD_SUCCESS && nfailed == 1 && failed[0] == 2, "agree: %s, %d failed",
               smd_result_string(rc), nfailed);
  }
  arrive_and_leave(job, nullptr, world);
}

TEST(Elastic, AMemberLaterThanTheTimeoutIsDeclaredFailedAndToldSo) {
  Pipe go;
  Job job;
  job.start(3, {{"SMD_TIMEOUT", "4"}}, 0, [&](int r) { late_member(r, job, go); });
  ASSERT_TRUE(job.await_arrivals(2)) << "rank 0 or 1 failed (its status below)";
  go.put();
  EXPECT_TRUE(job.await_arrivals(1)) << "rank 2 failed (its status below)";
  job.leave.p.close_writer();
  for (int r = 0; r < 3; ++r) EXPECT_EQ(job.finish(r), 0) << "rank " << r;
}

// Rank 0 revokes from its main thread while another of its threads is in
// an allreduce and rank 1 waits for an iallreduce that rank 2 never joins:
// both end with SMD_ERR_REVOKED; rank 2's first call after that ends the
// same way.
// Rank 0 revokes from its main thread while another of its threads is in
// an allreduce and rank 1 waits for an iallreduce that rank 2 never joins:
// both end with SMD_ERR_REVOKED; rank 2's first call after that ends the
// same way.
void revoker(int r, Job &job, Pipe &stuck, Pipe &go) {
  smd_comm_t *world = init_world();
  expect_sum(world, r, 0 + 1 + 2);
  int64_t v = 1, out = 0;
  if (r == 0) {
    smd_result_t in_thread = SMD_SUCCESS;
    std::thread t(
        [&] { in_thread = smd_allreduce(&v, &out, 1, SMD_INT64, SMD_SUM, world, nullptr); });
    // Both peers are past the warm-up call (a revoke ends calls in flight
    // too) and rank 1 is about to call again.
    CHECK_RANK(stuck.take() && stuck.take(), "the peers' signals");
    CHECK_RANK(smd_comm_revoke(world) == SMD_SUCCESS, "revoke");
    t.join();
    CHECK_RANK(in_thread == SMD_ERR_REVOKED, "the other thread's allreduce: %s",
               smd_result_string(in_thread));
    smd_result_t rc = smd_allreduce(&v, &out, 1, SMD_INT64, SMD_SUM, world, nullptr);
    CHECK_RANK(rc == SMD_ERR_REVOKED, "a later call: %s", smd_result_string(rc));
  } else if (r == 1) {
    // Nonblocking here: the request's wait ends with the revoke too.
    smd_request_t *req = nullptr;
    smd_result_t rc = smd_iallreduce(&v, &out, 1, SMD_INT64, SMD_SUM, world, nullptr, &req);
    CHECK_RANK(rc == SMD_SUCCESS, "iallreduce: %s", smd_result_string(rc));
    stuck.put();  // it cannot finish without rank 2, revoked or not
    rc = smd_request_wait(req);
    CHECK_RANK(rc == SMD_ERR_REVOKED, "iallreduce on a revoked communicator: %s",
               smd_result_string(rc));
    rc = smd_request_free(req);  // returns the operation's result
    CHECK_RANK(rc == SMD_ERR_REVOKED, "free: %s", smd_result_string(rc));
    rc = smd_allreduce(&v, &out, 1, SMD_INT64, SMD_SUM, world, nullptr);
    CHECK_RANK(rc == SMD_ERR_REVOKED, "a later call: %s", smd_result_string(rc));
    smd_result_t async = SMD_SUCCESS;
    smd_comm_get_async_error(world, &async);
    CHECK_RANK(async == SMD_ERR_REVOKED, "async error %s", smd_result_string(async));
  } else {
    stuck.put();
    CHECK_RANK(go.take(), "the test's go");
    smd_result_t rc = smd_allreduce(&v, &out, 1, SMD_INT64, SMD_SUM, world, nullptr);
    CHECK_RANK(rc == SMD_ERR_REVOKED, "the first call after a peer's revoke: %s",
               smd_result_string(rc));
  }
  arrive_and_leave(job, nullptr, world);
}

TEST(Elastic, RevokeEndsPendingAndLaterCallsOnEveryRank) {
  for (const Transport &t : transports()) {
    SCOPED_TRACE(t.name);
    Pipe stuck, go;
    Job job;
    job.start(3, t.env, t.ranks_per_node, [&](int r) { revoker(r, job, stuck, go); });
    EXPECT_TRUE(job.await_arrivals(2)) << "rank 0 or 1 failed (its status below)";
    go.put();
    EXPECT_TRUE(job.await_arrivals(1)) << "rank 2 failed (its status below)";
    job.leave.p.close_writer();
    for (int r = 0; r < 3; ++r) EXPECT_EQ(job.finish(r), 0) << "rank " << r;
  }
}

TEST(Elastic, ArgumentsAreChecked) {
  uint32_t flag = 1;
  int nfailed = 0;
  EXPECT_EQ(smd_comm_revoke(nullptr), SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(smd_comm_agree(nullptr, &flag, nullptr, 0, &nfailed), SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(smd_comm_shrink(nullptr, nullptr, nullptr), SMD_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(smd_result_string(SMD_ERR_REVOKED), "SMD_ERR_REVOKED");
}

// A world of one (no launcher variables here): the calls' own checks, and
// agree and shrink still working on a revoked communicator. Last: this
// process starts smd's threads, and the tests above fork.
TEST(Elastic, OneRankWorldAgreesAndShrinksAfterRevoke) {
  smd_comm_t *world = nullptr;
  ASSERT_EQ(smd_comm_init(nullptr, &world), SMD_SUCCESS) << smd_last_error();
  uint32_t flag = 0x5a;
  int failed[1] = {7}, nfailed = -1;
  EXPECT_EQ(smd_comm_agree(world, &flag, failed, -1, &nfailed), SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(smd_comm_agree(world, &flag, nullptr, 1, &nfailed), SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(smd_comm_agree(world, nullptr, nullptr, 0, &nfailed), SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(smd_comm_revoke(world), SMD_SUCCESS);
  EXPECT_EQ(smd_comm_revoke(world), SMD_SUCCESS);  // twice is fine
  int64_t v = 1, out = 0;
  EXPECT_EQ(smd_allreduce(&v, &out, 1, SMD_INT64, SMD_SUM, world, nullptr), SMD_ERR_REVOKED);
  smd_result_t async = SMD_SUCCESS;
  EXPECT_EQ(smd_comm_get_async_error(world, &async), SMD_SUCCESS);
  EXPECT_EQ(async, SMD_ERR_REVOKED);
  ASSERT_EQ(smd_comm_agree(world, &flag, nullptr, 0, &nfailed), SMD_SUCCESS) << smd_last_error();
  EXPECT_EQ(flag, 0x5au);
  EXPECT_EQ(nfailed, 0);
  smd_comm_t *shrunk = nullptr;
  int old_to_new[1] = {-5};
  ASSERT_EQ(smd_comm_shrink(world, &shrunk, old_to_new), SMD_SUCCESS) << smd_last_error();
  EXPECT_EQ(old_to_new[0], 0);
  EXPECT_EQ(smd_allreduce(&v, &out, 1, SMD_INT64, SMD_SUM, shrunk, nullptr), SMD_SUCCESS);
  EXPECT_EQ(out, 1);
  EXPECT_EQ(smd_comm_destroy(shrunk), SMD_SUCCESS);
  EXPECT_EQ(smd_comm_destroy(world), SMD_SUCCESS);
}

}  // namespace
