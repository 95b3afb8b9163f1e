// Growing a communicator with real processes: after a rank is killed and
// the survivors shrink, a new process joins them through the store
// (smd_comm_grow on the members, smd_comm_join on the newcomer), and the
// grown communicator reduces at the old size again. Also: a joiner with a
// wrong token is refused without disturbing the grow, and too few
// joiners end the grow with a timeout on every member.
#include <gtest/gtest.h>
#include <smd.h>

#include <cstring>
#include <string>
#include <vector>

#include "elastic_ranks.h"

using namespace elastic_test;

namespace {

struct Shape {
  int size = 0, rank = -1, nodes = 0, local_size = 0;
};

Shape shape_of(smd_comm_t *c) {
  Shape s;
  smd_comm_size(c, &s.size);
  smd_comm_rank(c, &s.rank);
  smd_comm_node_count(c, &s.nodes);
  smd_comm_local_size(c, &s.local_size);
  return s;
}

// What every process of the grown communicator checks: its place, the
// node structure (formed again from all four processes), small and large
// reductions (hierarchical on two nodes), and an agreement with nobody
// failed.
void check_grown(smd_comm_t *grown, int want_rank, int ranks_per_node) {
  Shape s = shape_of(grown);
  CHECK_RANK(s.size == 4 && s.rank == want_rank, "grown size %d rank %d (want 4, %d)", s.size,
             s.rank, want_rank);
  int want_nodes = ranks_per_node == 0 ? 1 : ranks_per_node == 1 ? 4 : 2;
  int want_local = ranks_per_node == 0 ? 4 : ranks_per_node == 1 ? 1 : 2;
  CHECK_RANK(s.nodes == want_nodes && s.local_size == want_local,
             "%d nodes (want %d), %d local (want %d)", s.nodes, want_nodes, s.local_size,
             want_local);
  expect_sum(grown, s.rank + 1, 1 + 2 + 3 + 4);
  std::vector<float> big(1 << 16, float(s.rank + 1)), sum(big.size());
  smd_result_t rc =
      smd_allreduce(big.data(), sum.data(), big.size(), SMD_FLOAT32, SMD_SUM, grown, nullptr);
  CHECK_RANK(rc == SMD_SUCCESS, "big allreduce: %s", smd_result_string(rc));
  for (float x : sum) CHECK_RANK(x == 10.0f, "big allreduce element %g", double(x));
  if (ranks_per_node == 2) {
    smd_comm_stats_t stats{};
    stats.struct_size = sizeof stats;
    smd_comm_get_stats(grown, &stats);
    CHECK_RANK(std::string(stats.last_algorithm) == "hierarchical", "algorithm %s",
               stats.last_algorithm);
  }
  uint32_t flag = 1;
  int failed[4], nfailed = -1;
  rc = smd_comm_agree(grown, &flag, failed, 4, &nfailed);
  CHECK_RANK(rc == SMD_SUCCESS && flag == 1 && nfailed == 0,
             "agree on the grown: %s, flag %u, %d failed", smd_result_string(rc), flag, nfailed);
}

// Rank 2 of 4 is killed; the survivors shrink to 3 and grow back to 4.
void member_after_kill(int r, int ranks_per_node, Job &job) {
  smd_comm_t *world = init_world();
  expect_sum(world, r, 0 + 1 + 2 + 3);
  job.arrived.put();
  if (r == 2) pause();
  int64_t v = 1, out = 0;
  smd_result_t rc = smd_allreduce(&v, &out, 1, SMD_INT64, SMD_SUM, world, nullptr);
  CHECK_RANK(rc == SMD_ERR_PEER_FAILURE || rc == SMD_ERR_REVOKED,
             "allreduce with a killed peer: %s", smd_result_string(rc));
  CHECK_RANK(smd_comm_revoke(world) == SMD_SUCCESS, "revoke");
  smd_comm_t *shrunk = nullptr;
  rc = smd_comm_shrink(world, &shrunk, nullptr);
  CHECK_RANK(rc == SMD_SUCCESS, "shrink: %s", smd_result_string(rc));
  int me = -1;
  smd_comm_rank(shrunk, &me);
  expect_sum(shrunk, me + 1, 1 + 2 + 3);
  smd_comm_t *grown = nullptr;
  rc = smd_comm_grow(shrunk, 1, 0, &grown);
  CHECK_RANK(rc == SMD_SUCCESS, "grow: %s", smd_result_string(rc));
  check_grown(grown, me, ranks_per_node);
  job.arrived.put();
  job.leave.wait();
  CHECK_RANK(smd_comm_destroy(grown) == SMD_SUCCESS, "destroy the grown");
  CHECK_RANK(smd_comm_destroy(shrunk) == SMD_SUCCESS, "destroy the shrunk");
  CHECK_RANK(smd_comm_destroy(world) == SMD_SUCCESS, "destroy the world");
}

void joiner(int ranks_per_node, Job &job) {
  smd_comm_t *grown = nullptr;
  smd_result_t rc = smd_comm_join(nullptr, &grown);
  CHECK_RANK(rc == SMD_SUCCESS, "join: %s", smd_result_string(rc));
  check_grown(grown, 3, ranks_per_node);
  job.arrived.put();
  job.leave.wait();
  CHECK_RANK(smd_comm_destroy(grown) == SMD_SUCCESS, "destroy the grown");
}

// The replacement's node: its own one over tcp, the killed rank's with two.
std::string replacement_node(int ranks_per_node) {
  return ranks_per_node == 0 ? "" : ranks_per_node == 1 ? "node-new" : "node1";
}

TEST(ElasticGrow, AReplacementJoinsTheShrunkSurvivorsAndTheyReduceAtFourAgain) {
  for (const Transport &t : with_network_plugins()) {
    SCOPED_TRACE(t.name);
    Job job;
    job.start(4, t.env, t.ranks_per_node,
              [&](int r) { member_after_kill(r, t.ranks_per_node, job); });
    ASSERT_TRUE(job.await_arrivals(4)) << "a rank failed before the kill";
    job.kill_rank(2);
    EXPECT_EQ(job.finish(2), -SIGKILL);
    int j = job.start_joiner(t.env, replacement_node(t.ranks_per_node),
                             [&](int) { joiner(t.ranks_per_node, job); });
    EXPECT_TRUE(job.await_arrivals(4)) << "a member or the joiner failed (its status below)";
    job.leave.p.close_writer();
    for (int r : {0, 1, 3, j}) EXPECT_EQ(job.finish(r), 0) << "process " << r;
  }
}

// Members of a world of 2 grow by 1 and reduce at 3 with `grown`.
void grow_by_one(int r, Job &job, Pipe *after_timeout) {
  smd_comm_t *world = init_world();
  smd_comm_t *grown = nullptr;
  if (after_timeout) {
    // Nobody joins within 300 ms: a timeout on every member.
    smd_result_t rc = smd_comm_grow(world, 1, 300, &grown);
    CHECK_RANK(rc == SMD_ERR_TIMEOUT && !grown, "a grow nobody joins ended with %s",
               smd_result_string(rc));
    CHECK_RANK(strstr(smd_last_error(), "0 of 1 new processes joined"), "message: %s",
               smd_last_error());
    // Members that disagree on the count: a mismatch on every member.
    rc = smd_comm_grow(world, r + 1, 300, &grown);
    CHECK_RANK(rc == SMD_ERR_MISMATCH && !grown, "a grow of mismatched counts ended with %s",
               smd_result_string(rc));
    job.arrived.put();
  }
  smd_result_t rc = smd_comm_grow(world, 1, 0, &grown);
  CHECK_RANK(rc == SMD_SUCCESS, "grow: %s", smd_result_string(rc));
  int size = 0, me = -1;
  smd_comm_size(grown, &size);
  smd_comm_rank(grown, &me);
  CHECK_RANK(size == 3 && me == r, "grown size %d rank %d", size, me);
  expect_sum(grown, me, 0 + 1 + 2);
  job.arrived.put();
  job.leave.wait();
  CHECK_RANK(smd_comm_destroy(grown) == SMD_SUCCESS, "destroy the grown");
  CHECK_RANK(smd_comm_destroy(world) == SMD_SUCCESS, "destroy the world");
}

void good_joiner(Job &job) {
  smd_comm_t *grown = nullptr;
  smd_result_t rc = smd_comm_join(nullptr, &grown);
  CHECK_RANK(rc == SMD_SUCCESS, "join: %s", smd_result_string(rc));
  int me = -1;
  smd_comm_rank(grown, &me);
  CHECK_RANK(me == 2, "joiner's rank %d", me);
  expect_sum(grown, me, 0 + 1 + 2);
  job.arrived.put();
  job.leave.wait();
  CHECK_RANK(smd_comm_destroy(grown) == SMD_SUCCESS, "destroy the grown");
}

TEST(ElasticGrow, AJoinerWithAWrongTokenIsRefusedAndDisturbsNobody) {
  Transport t = transports()[0];
  Job job;
  job.start(2, t.env, 0, [&](int r) { grow_by_one(r, job, nullptr); });
  int bad = job.start_joiner({{"SMD_JOB_TOKEN", "not-the-job-token"}}, "", [&](int) {
    smd_comm_t *grown = nullptr;
    smd_result_t rc = smd_comm_join(nullptr, &grown);
    CHECK_RANK(rc == SMD_ERR_BOOTSTRAP && !grown, "a joiner with a wrong token: %s",
               smd_result_string(rc));
    CHECK_RANK(strstr(smd_last_error(), "token mismatch"), "message: %s", smd_last_error());
  });
  EXPECT_EQ(job.finish(bad), 0) << "the refused joiner";
  int good = job.start_joiner(t.env, "", [&](int) { good_joiner(job); });
  EXPECT_TRUE(job.await_arrivals(3)) << "a member or the joiner failed (its status below)";
  job.leave.p.close_writer();
  for (int r : {0, 1, good}) EXPECT_EQ(job.finish(r), 0) << "process " << r;
}

TEST(ElasticGrow, TooFewJoinersIsATimeoutOnEveryMemberAndALaterGrowWorks) {
  Transport t = transports()[0];
  Pipe after_timeout;
  Job job;
  job.start(2, t.env, 0, [&](int r) { grow_by_one(r, job, &after_timeout); });
  ASSERT_TRUE(job.await_arrivals(2))
      << "a member's timeout or mismatch went wrong (its status below)";
  // The timed-out grow's slot was voided: this joiner takes the next one.
  int j = job.start_joiner(t.env, "", [&](int) { good_joiner(job); });
  EXPECT_TRUE(job.await_arrivals(3)) << "a member or the joiner failed (its status below)";
  job.leave.p.close_writer();
  for (int r : {0, 1, j}) EXPECT_EQ(job.finish(r), 0) << "process " << r;
}

// A grown world loses its joiner: the members see it, shrink the grown
// communicator back to themselves and grow it again with a new joiner.
void member_losing_its_joiner(int r, Job &job) {
  smd_comm_t *world = init_world();
  smd_comm_t *grown = nullptr;
  smd_result_t rc = smd_comm_grow(world, 1, 0, &grown);
  CHECK_RANK(rc == SMD_SUCCESS, "grow: %s", smd_result_string(rc));
  expect_sum(grown, r, 0 + 1 + 2);
  job.arrived.put();  // the test kills the joiner now
  int64_t v = 1, out = 0;
  rc = smd_allreduce(&v, &out, 1, SMD_INT64, SMD_SUM, grown, nullptr);
  CHECK_RANK(rc == SMD_ERR_PEER_FAILURE || rc == SMD_ERR_REVOKED,
             "allreduce without the joiner: %s", smd_result_string(rc));
  CHECK_RANK(smd_comm_revoke(grown) == SMD_SUCCESS, "revoke");
  smd_comm_t *shrunk = nullptr;
  int old_to_new[3];
  rc = smd_comm_shrink(grown, &shrunk, old_to_new);
  CHECK_RANK(rc == SMD_SUCCESS, "shrink of the grown: %s", smd_result_string(rc));
  CHECK_RANK(old_to_new[0] == 0 && old_to_new[1] == 1 && old_to_new[2] == -1, "old_to_new %d %d %d",
             old_to_new[0], old_to_new[1], old_to_new[2]);
  expect_sum(shrunk, r, 0 + 1);
  smd_comm_t *again = nullptr;
  rc = smd_comm_grow(shrunk, 1, 0, &again);
  CHECK_RANK(rc == SMD_SUCCESS, "second grow: %s", smd_result_string(rc));
  expect_sum(again, r, 0 + 1 + 2);
  job.arrived.put();
  job.leave.wait();
  for (smd_comm_t *c : {again, shrunk, grown, world})
    CHECK_RANK(smd_comm_destroy(c) == SMD_SUCCESS, "destroy");
}

TEST(ElasticGrow, AKilledJoinerIsFoundAndTheGrownWorldShrinksAndGrowsAgain) {
  for (const Transport &t : transports()) {
    SCOPED_TRACE(t.name);
    Job job;
    job.start(2, t.env, t.ranks_per_node, [&](int r) { member_losing_its_joiner(r, job); });
    int first = job.start_joiner(t.env, replacement_node(t.ranks_per_node), [&](int) {
      smd_comm_t *grown = nullptr;
      CHECK_RANK(smd_comm_join(nullptr, &grown) == SMD_SUCCESS, "join");
      expect_sum(grown, 2, 0 + 1 + 2);
      job.arrived.put();
      pause();  // killed here
    });
    ASSERT_TRUE(job.await_arrivals(3)) << "a process failed before the kill";
    job.kill_rank(first);
    EXPECT_EQ(job.finish(first), -SIGKILL);
    int second = job.start_joiner(t.env, replacement_node(t.ranks_per_node), [&](int) {
      smd_comm_t *grown = nullptr;
      CHECK_RANK(smd_comm_join(nullptr, &grown) == SMD_SUCCESS, "join");
      expect_sum(grown, 2, 0 + 1 + 2);
      job.arrived.put();
      job.leave.wait();
      CHECK_RANK(smd_comm_destroy(grown) == SMD_SUCCESS, "destroy");
    });
    EXPECT_TRUE(job.await_arrivals(3)) << "a member or the second joiner failed (its status below)";
    job.leave.p.close_writer();
    for (int r : {0, 1, second}) EXPECT_EQ(job.finish(r), 0) << "process " << r;
  }
}

TEST(ElasticGrow, ArgumentsAreChecked) {
  smd_comm_t *out = nullptr;
  EXPECT_EQ(smd_comm_grow(nullptr, 1, 0, &out), SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(smd_comm_join(nullptr, nullptr), SMD_ERR_INVALID_ARGUMENT);
  smd_comm_t *world = nullptr;
  ASSERT_EQ(smd_comm_init(nullptr, &world), SMD_SUCCESS) << smd_last_error();
  EXPECT_EQ(smd_comm_grow(world, 1, 0, nullptr), SMD_ERR_INVALID_ARGUMENT);
  // A world of one formed without a store: nobody could find it.
  EXPECT_EQ(smd_comm_grow(world, 1, 0, &out), SMD_ERR_INVALID_USAGE);
  EXPECT_NE(std::string(smd_last_error()).find("without a store"), std::string::npos)
      << smd_last_error();
  EXPECT_EQ(smd_comm_destroy(world), SMD_SUCCESS);
}

}  // namespace
