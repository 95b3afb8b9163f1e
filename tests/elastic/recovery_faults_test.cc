// Faults during recovery, with real processes killed with SIGKILL: a
// member dies after it voted in a shrink (while the new communicator
// forms), and the process that serves the TCP store dies.
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <smd.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "elastic_ranks.h"

namespace {

using namespace elastic_test;

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Rank 2 is killed; then ranks 0, 1 and 3 shrink, and rank 3 dies right
// after it wrote its vote (the world formed through the file store, which
// kills it there), so the agreement counts it and the new communicator
// {0, 1, 3} forms without it. Ranks 0 and 1 must not end
// with a communicator that holds a dead member (over tcp its setup alone
// would not notice): their one shrink call goes round again and returns
// {0, 1}, on which they reduce.
void dies_after_voting(int r, Job &job, FileStore &store) {
  smd_comm_t *world = init_world(store);
  expect_sum(world, r, 0 + 1 + 2 + 3);
  job.arrived.put();
  if (r == 2) pause();
  int64_t v = 1, out = 0;
  smd_result_t rc = smd_allreduce(&v, &out, 1, SMD_INT64, SMD_SUM, world, nullptr);
  CHECK_RANK(rc == SMD_ERR_PEER_FAILURE || rc == SMD_ERR_REVOKED, "allreduce: %s",
             smd_result_string(rc));
  smd_comm_revoke(world);
  job.arrived.put();
  if (r == 3) store.die_after_writing = "/agree/0/slot/3";  // its vote in the shrink's agreement
  auto start = std::chrono::steady_clock::now();
  smd_comm_t *shrunk = nullptr;
  int old_to_new[4];
  rc = smd_comm_shrink(world, &shrunk, old_to_new);
  CHECK_RANK(r != 3, "rank 3 lived on past its shrink (%s)", smd_result_string(rc));
  CHECK_RANK(rc == SMD_SUCCESS, "shrink: %s", smd_result_string(rc));
  CHECK_RANK(old_to_new[0] == 0 && old_to_new[1] == 1 && old_to_new[2] == -1 && old_to_new[3] == -1,
             "old_to_new %d %d %d %d", old_to_new[0], old_to_new[1], old_to_new[2], old_to_new[3]);
  expect_sum(shrunk, r + 1, 1 + 2);
  double took = seconds_since(start);
  fprintf(stderr, "rank %d: from the shrink call to a working communicator: %.2f s\n", r, took);
  // docs/ELASTIC.md's bound: the death's detection, two rounds of
  // agreements and setups, well under SMD_TIMEOUT (30 s here).
  CHECK_RANK(took < 30, "recovery took %.1f s, past SMD_TIMEOUT", took);
  arrive_and_leave(job, shrunk, world);
}

TEST(ElasticRecovery, AMemberKilledAfterItsVoteIsLeftOutByTheSameShrinkCall) {
  for (const Transport &t : transports()) {
    SCOPED_TRACE(t.name);
    FileStore store;
    ASSERT_FALSE(store.dir.empty()) << "mkdtemp failed";
    Job job;
    job.start(4, t.env, t.ranks_per_node, [&](int r) { dies_after_voting(r, job, store); });
    ASSERT_TRUE(job.await_arrivals(4)) << "a rank failed before the first kill";
    job.kill_rank(2);
    ASSERT_TRUE(job.await_arrivals(3)) << "a survivor failed before the shrink";
    EXPECT_EQ(job.finish(3), -SIGKILL) << "rank 3 was to die after its vote";
    EXPECT_TRUE(job.await_arrivals(2)) << "rank 0 or 1 failed (its status below)";
    job.leave.p.close_writer();
    for (int r : {0, 1}) EXPECT_EQ(job.finish(r), 0) << "rank " << r;
  }
}

// World rank 0 serves the TCP store (smdrun serves none: the ranks'
// SMD_MASTER_ADDR/PORT name rank 0's). When it is killed, a communicator
// without it ({1, 2, 3}, split before) runs no wait past a health check:
// ranks 1 and 2 wait in an allreduce for rank 3 (held back by the test)
// and get SMD_ERR_PEER_FAILURE naming the lost store. Rank 3, coming
// later, may still complete that allreduce with the right sum (the others
// had left their data; without the store they cannot announce their
// failure), but its next call fails the same way. Shrinking that
// communicator and the world end the same way on every survivor. Nothing
// hangs.
void store_host_lost(int r, Job &job, Pipe &go, Leave &shrink) {
  smd_comm_t *world = init_world();
  smd_comm_t *sub = nullptr;
  smd_result_t rc = smd_comm_split(world, r == 0 ? -1 : 1, r, &sub);
  CHECK_RANK(rc == SMD_SUCCESS, "split: %s", smd_result_string(rc));
  if (sub) expect_sum(sub, r, 1 + 2 + 3);
  job.arrived.put();
  if (r == 0) pause();
  if (r == 3) CHECK_RANK(go.take(), "the test's go");  // after ranks 1 and 2 failed
  int64_t v = 1, out = 0;
  rc = smd_allreduce(&v, &out, 1, SMD_INT64, SMD_SUM, sub, nullptr);
  if (r == 3 && rc == SMD_SUCCESS) {
    CHECK_RANK(out == 3, "rank 3's late allreduce gave %lld", (long long)out);
    rc = smd_allreduce(&v, &out, 1, SMD_INT64, SMD_SUM, sub, nullptr);
  }
  CHECK_RANK(rc == SMD_ERR_PEER_FAILURE && strstr(smd_last_error(), "store") != nullptr,
             "allreduce on {1, 2, 3} without the store: %s (sum %lld)", smd_result_string(rc),
             (long long)out);
  job.arrived.put();
  shrink.wait();  // until rank 3 is through too
  smd_comm_t *shrunk = nullptr;
  for (smd_comm_t *c : {sub, world}) {
    rc = smd_comm_shrink(c, &shrunk, nullptr);
    CHECK_RANK(rc == SMD_ERR_PEER_FAILURE && strstr(smd_last_error(), "store") != nullptr,
               "shrink of the %s without the store: %s", c == sub ? "split" : "world",
               smd_result_string(rc));
  }
  job.arrived.put();
  job.leave.wait();
  CHECK_RANK(smd_comm_destroy(sub) == SMD_SUCCESS, "destroy the split");
  CHECK_RANK(smd_comm_destroy(world) == SMD_SUCCESS, "destroy the world");
}

TEST(ElasticRecovery, LosingTheStoresHostEndsWaitsAndShrinksOfEveryCommunicatorWithAClearError) {
  for (const Transport &t : transports()) {
    SCOPED_TRACE(t.name);
    Job job;
    Pipe go;
    Leave shrink;
    job.start(4, t.env, t.ranks_per_node, [&](int r) { store_host_lost(r, job, go, shrink); });
    ASSERT_TRUE(job.await_arrivals(4)) << "a rank failed before the kill";
    job.kill_rank(0);
    ASSERT_TRUE(job.await_arrivals(2)) << "rank 1 or 2 failed (its status below)";
    go.put();
    ASSERT_TRUE(job.await_arrivals(1)) << "rank 3 failed (its status below)";
    shrink.p.close_writer();
    EXPECT_TRUE(job.await_arrivals(3)) << "a survivor's shrink failed (its status below)";
    job.leave.p.close_writer();
    for (int r : {1, 2, 3}) EXPECT_EQ(job.finish(r), 0) << "rank " << r;
  }
}

}  // namespace
