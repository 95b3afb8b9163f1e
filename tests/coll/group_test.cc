// Group calls (smd_group_start/smd_group_end): grouped results equal the
// same calls run one by one, for every collective kind mixed in one group,
// ragged tensor sizes, nesting, nonblocking requests, point-to-point
// exchanges, and the error rules. Runs on whatever world smdrun gives
// (1-4 ranks in the coll suite; 2x2 fake nodes in the tcp suite).
#include <gtest/gtest.h>
#include <smd.h>

#include <cstring>
#include <random>
#include <thread>
#include <string>
#include <vector>

#include "mp_env.h"

using mptest::rank;
using mptest::size;
using mptest::world;

namespace {

enum class Kind {
  kAllreduce,
  kAllgather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAlltoall,
  kBarrier
};

struct Call {
  Kind kind;
  size_t count;
  smd_datatype_t dt;
  smd_op_t op;
  int root;
  std::vector<uint8_t> send, recv;
};

size_t es_of(smd_datatype_t dt) {
  size_t s = 0;
  smd_datatype_size(dt, &s);
  return s;
}

// Elements of the send and receive buffers of a call of `count`.
size_t send_elems(const Call &c) {
  bool per_rank = c.kind == Kind::kReduceScatter || c.kind == Kind::kAlltoall;
  return per_rank ? c.count * size_t(size()) : c.count;
}
size_t recv_elems(const Call &c) {
  bool per_rank = c.kind == Kind::kAllgather || c.kind == Kind::kAlltoall;
  return per_rank ? c.count * size_t(size()) : c.count;
}

// Small integers, exact in every datatype and under every op used here.
void fill(Call &c, int salt) {
  size_t es = es_of(c.dt), n = send_elems(c);
  c.send.assign(std::max<size_t>(1, n * es), 0);
  c.recv.assign(std::max<size_t>(1, recv_elems(c) * es), 0xA5);
  for (size_t i = 0; i < n; ++i) {
    int v = int((i * 7 + size_t(rank()) * 3 + size_t(salt)) % 5) + 1;
    if (c.dt == SMD_FLOAT32) {
      float f = float(v);
      memcpy(&c.send[i * es], &f, es);
    } else if (c.dt == SMD_FLOAT64) {
      double d = double(v);
      memcpy(&c.send[i * es], &d, es);
    } else {
      int32_t x = v;
      memcpy(&c.send[i * es], &x, es);
    }
  }
}

smd_result_t issue(Call &c, smd_request_t **req) {
  void *s = c.send.data(), *r = c.recv.data();
  smd_comm_t *w = world();
  switch (c.kind) {
    case Kind::kAllreduce:
      return req ? smd_iallreduce(s, r, c.count, c.dt, c.op, w, nullptr, req)
                 : smd_allreduce(s, r, c.count, c.dt, c.op, w, nullptr);
    case Kind::kAllgather:
      return req ? smd_iallgather(s, r, c.count, c.dt, w, nullptr, req)
                 : smd_allgather(s, r, c.count, c.dt, w, nullptr);
    case Kind::kReduceScatter:
      return req ? smd_ireduce_scatter(s, r, c.count, c.dt, c.op, w, nullptr, req)
                 : smd_reduce_scatter(s, r, c.count, c.dt, c.op, w, nullptr);
    case Kind::kBroadcast:
      return req ? smd_ibroadcast(s, r, c.count, c.dt, c.root, w, nullptr, req)
                 : smd_broadcast(s, r, c.count, c.dt, c.root, w, nullptr);
    case Kind::kReduce:
      return req ? smd_ireduce(s, r, c.count, c.dt, c.op, c.root, w, nullptr, req)
                 : smd_reduce(s, r, c.count, c.dt, c.op, c.root, w, nullptr);
    case Kind::kAlltoall:
      return req ? smd_ialltoall(s, r, c.count, c.dt, w, nullptr, req)
                 : smd_alltoall(s, r, c.count, c.dt, w, nullptr);
    case Kind::kBarrier: return req ? smd_ibarrier(w, nullptr, req) : smd_barrier(w, nullptr);
  }
  return SMD_ERR_INTERNAL;
}

// Runs `calls` one by one (the reference), then again in one group with
// every other call nonblocking, and compares the outputs byte for byte.
uint64_t collectives_run();

// `runs`, if given, receives the collectives run ungrouped and grouped
// (smd_comm_get_stats).
void expect_grouped_equals_ungrouped(std::vector<Call> calls,
                                     std::pair<uint64_t, uint64_t> *runs = nullptr) {
  uint64_t start = collectives_run();
  std::vector<std::vector<uint8_t>> want;
  for (size_t i = 0; i < calls.size(); ++i) {
    fill(calls[i], int(i));
    EXPECT_EQ(issue(calls[i], nullptr), SMD_SUCCESS) << "call " << i << ": " << smd_last_error();
    want.push_back(calls[i].recv);
  }
  uint64_t mid = collectives_run();
  std::vector<smd_request_t *> reqs(calls.size(), nullptr);
  SMD_OK(smd_group_start());
  for (size_t i = 0; i < calls.size(); ++i) {
    fill(calls[i], int(i));
    SMD_OK(issue(calls[i], i % 2 ? &reqs[i] : nullptr));
  }
  SMD_OK(smd_group_end());
  for (size_t i = 0; i < calls.size(); ++i) {
    if (reqs[i]) SMD_OK(smd_request_free(reqs[i]));
    EXPECT_TRUE(calls[i].recv == want[i])
        << "rank " << rank() << ": call " << i << " (kind " << int(calls[i].kind) << ", count "
        << calls[i].count << ") differs from the ungrouped result";
  }
  if (runs) *runs = {mid - start, collectives_run() - mid};
}

TEST(Groups, EveryKindMixedInOneGroup) {
  int last = size() - 1;
  std::vector<Call> calls = {
      {Kind::kAllreduce, 1000, SMD_FLOAT32, SMD_SUM, 0, {}, {}},
      {Kind::kAllgather, 33, SMD_INT32, SMD_SUM, 0, {}, {}},
      {Kind::kAllreduce, 7, SMD_FLOAT32, SMD_SUM, 0, {}, {}},
      {Kind::kReduceScatter, 100, SMD_FLOAT32, SMD_SUM, 0, {}, {}},
      {Kind::kAllreduce, 513, SMD_INT32, SMD_MAX, 0, {}, {}},
      {Kind::kBroadcast, 777, SMD_FLOAT64, SMD_SUM, last, {}, {}},
      {Kind::kReduce, 300, SMD_FLOAT32, SMD_SUM, last, {}, {}},
      {Kind::kAlltoall, 17, SMD_INT32, SMD_SUM, 0, {}, {}},
      {Kind::kBarrier, 0, SMD_FLOAT32, SMD_SUM, 0, {}, {}},
      {Kind::kAllreduce, 4096, SMD_FLOAT32, SMD_AVG, 0, {}, {}},
      {Kind::kAllreduce, 1, SMD_FLOAT32, SMD_SUM, 0, {}, {}},
      {Kind::kAllreduce, 65, SMD_INT32, SMD_MAX, 0, {}, {}},
      {Kind::kAllreduce, 0, SMD_FLOAT32, SMD_SUM, 0, {}, {}},
  };
  expect_grouped_equals_ungrouped(std::move(calls));
}

TEST(Groups, RaggedSizesFromOneElementToOneMiB) {
  // The same sizes on every rank: a generator seeded alike.
  std::mt19937 gen(1234);
  std::vector<Call> calls;
  const size_t sizes[] = {1, 3, 15, 16, 17, 255, 1000, 4099, 65536, 262144};
  for (int i = 0; i < 40; ++i) {
    size_t n = sizes[gen() % 10] + gen() % 7;
    calls.push_back({Kind::kAllreduce, n, i % 3 ? SMD_FLOAT32 : SMD_INT32, SMD_SUM, 0, {}, {}});
  }
  calls.push_back({Kind::kAllreduce, 1 << 18, SMD_FLOAT32, SMD_SUM, 0, {}, {}});  // 1 MiB
  expect_grouped_equals_ungrouped(std::move(calls));
}

uint64_t collectives_run() {
  smd_comm_stats_t st{};
  st.struct_size = sizeof st;
  EXPECT_EQ(smd_comm_get_stats(world(), &st), SMD_SUCCESS) << smd_last_error();
  return st.collectives;
}

TEST(Groups, ManySmallAllreducesFuse) {
  std::vector<Call> calls;
  for (int i = 0; i < 300; ++i)
    calls.push_back({Kind::kAllreduce, 1024, SMD_FLOAT32, SMD_SUM, 0, {}, {}});
  std::pair<uint64_t, uint64_t> runs;
  expect_grouped_equals_ungrouped(std::move(calls), &runs);
  auto [ungrouped, grouped] = runs;
  // 1.2 MiB in a few fused buffers (the hierarchy's phases count too).
  EXPECT_LT(grouped * 10, ungrouped) << "ungrouped " << ungrouped << ", grouped " << grouped;
}

TEST(Groups, EmptyAndNestedEmptyGroupsSucceed) {
  SMD_OK(smd_group_start());
  SMD_OK(smd_group_end());
  SMD_OK(smd_group_start());
  SMD_OK(smd_group_start());
  SMD_OK(smd_group_end());
  SMD_OK(smd_group_end());
}

TEST(Groups, EndWithoutStartFails) {
  EXPECT_EQ(smd_group_end(), SMD_ERR_INVALID_USAGE);
  EXPECT_NE(std::string(smd_last_error()).find("without smd_group_start"), std::string::npos)
      << smd_last_error();
  SMD_OK(smd_group_start());
  SMD_OK(smd_group_end());
  EXPECT_EQ(smd_group_end(), SMD_ERR_INVALID_USAGE);
}

TEST(Groups, BadArgumentInThirdCallFailsTheGroupAndLeavesTheCommunicatorUsable) {
  std::vector<float> a(100, 1.0f), b(100, -1.0f), c(100, -1.0f);
  smd_request_t *req = nullptr;
  SMD_OK(smd_group_start());
  SMD_OK(smd_allreduce(a.data(), b.data(), a.size(), SMD_FLOAT32, SMD_SUM, world(), nullptr));
  SMD_OK(
      smd_iallreduce(a.data(), c.data(), a.size(), SMD_FLOAT32, SMD_SUM, world(), nullptr, &req));
  EXPECT_EQ(smd_allreduce(a.data(), b.data(), a.size(), static_cast<smd_datatype_t>(99), SMD_SUM,
                          world(), nullptr),
            SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(smd_group_end(), SMD_ERR_INVALID_ARGUMENT);
  std::string msg = smd_last_error();
  EXPECT_NE(msg.find("call 3 (smd_allreduce)"), std::string::npos) << msg;
  EXPECT_EQ(smd_request_wait(req), SMD_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(smd_last_error()).find("call 3 (smd_allreduce)"), std::string::npos)
      << smd_last_error();
  EXPECT_EQ(smd_request_free(req), SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(b[0], -1.0f) << "nothing of a failed group runs";
  EXPECT_EQ(c[0], -1.0f);
  // Still usable, in and out of groups.
  SMD_OK(smd_allreduce(a.data(), b.data(), a.size(), SMD_FLOAT32, SMD_SUM, world(), nullptr));
  EXPECT_EQ(b[99], float(size()));
  SMD_OK(smd_group_start());
  SMD_OK(smd_allreduce(a.data(), c.data(), a.size(), SMD_FLOAT32, SMD_SUM, world(), nullptr));
  SMD_OK(smd_group_end());
  EXPECT_EQ(c[99], float(size()));
}

TEST(Groups, NestedGroupsRunAtTheOutermostEnd) {
  std::vector<float> a(64, 2.0f), b(64, 0.0f), c(64, 0.0f);
  smd_request_t *req = nullptr;
  SMD_OK(smd_group_start());
  SMD_OK(smd_group_start());
  SMD_OK(
      smd_iallreduce(a.data(), b.data(), a.size(), SMD_FLOAT32, SMD_SUM, world(), nullptr, &req));
  SMD_OK(smd_group_end());
  int done = 1;
  SMD_OK(smd_request_test(req, &done));
  EXPECT_EQ(done, 0) << "the inner end runs nothing";
  EXPECT_EQ(smd_request_wait(req), SMD_ERR_INVALID_USAGE) << "waiting inside the group";
  SMD_OK(smd_allreduce(a.data(), c.data(), a.size(), SMD_FLOAT32, SMD_SUM, world(), nullptr));
  EXPECT_EQ(c[0], 0.0f) << "queued, not run";
  SMD_OK(smd_group_end());
  SMD_OK(smd_request_wait(req));
  size_t count = 0;
  SMD_OK(smd_request_get_count(req, &count));
  EXPECT_EQ(count, a.size());
  SMD_OK(smd_request_free(req));
  EXPECT_EQ(b[63], 2.0f * float(size()));
  EXPECT_EQ(c[63], 2.0f * float(size()));
}

// Every rank sends 1 MiB to its right and receives from its left, blocking
// forms, in one group: the group posts all of them before waiting.
TEST(Groups, PointToPointRingExchangeInOneGroup) {
  if (size() < 2) GTEST_SKIP() << "needs 2 ranks";
  size_t n = 1 << 18;
  int right = (rank() + 1) % size(), left = (rank() + size() - 1) % size();
  std::vector<int32_t> out(n, rank()), in(n, -1), in2(n, -1), out2(n, rank() * 10);
  smd_request_t *rq = nullptr;
  SMD_OK(smd_group_start());
  SMD_OK(smd_send(out.data(), n, SMD_INT32, right, 5, world(), nullptr));
  SMD_OK(smd_recv(in.data(), n, SMD_INT32, left, 5, world(), nullptr));
  SMD_OK(smd_irecv(in2.data(), n, SMD_INT32, left, 6, world(), nullptr, &rq));
  SMD_OK(smd_send(out2.data(), n / 2, SMD_INT32, right, 6, world(), nullptr));
  SMD_OK(smd_group_end());
  SMD_OK(smd_request_wait(rq));
  size_t count = 0;
  SMD_OK(smd_request_get_count(rq, &count));
  EXPECT_EQ(count, n / 2);
  SMD_OK(smd_request_free(rq));
  EXPECT_EQ(in[0], left);
  EXPECT_EQ(in[n - 1], left);
  EXPECT_EQ(in2[n / 2 - 1], left * 10);
  EXPECT_EQ(in2[n / 2], -1);
}

TEST(Groups, CollectivesAndPointToPointOnTwoCommunicators) {
  smd_comm_t *dup = nullptr;
  SMD_OK(smd_comm_dup(world(), &dup));
  std::vector<float> a(5000, 1.0f), b(5000, 0.0f), c(3, 0.0f), d(3, 1.0f);
  SMD_OK(smd_group_start());
  SMD_OK(smd_allreduce(a.data(), b.data(), a.size(), SMD_FLOAT32, SMD_SUM, world(), nullptr));
  SMD_OK(smd_allreduce(d.data(), c.data(), d.size(), SMD_FLOAT32, SMD_MAX, dup, nullptr));
  SMD_OK(smd_group_end());
  EXPECT_EQ(b[4999], float(size()));
  EXPECT_EQ(c[2], 1.0f);
  SMD_OK(smd_comm_destroy(dup));
}

// A group's first collectives on fresh communicators run on their workers
// at once, so over several nodes each forms its hierarchy (node and rail
// communicators) at the same time as the others. Their ids must differ:
// two that shared one took each other's setup messages (an arena mapping
// another communicator's segment, which its creator then released).
TEST(Groups, FreshCommunicatorsFormTheirHierarchiesAtOnce) {
  constexpr int kComms = 3;
  for (int round = 0; round < 6; ++round) {
    smd_comm_t *c[kComms] = {};
    for (auto &x : c) SMD_OK(smd_comm_dup(world(), &x));
    std::vector<std::vector<float>> in(kComms), out(kComms);
    SMD_OK(smd_group_start());
    for (int k = 0; k < kComms; ++k) {
      in[k].assign(4096 + size_t(k), float(k + 1));
      out[k].assign(in[k].size(), 0.0f);
      SMD_OK(smd_allreduce(in[k].data(), out[k].data(), in[k].size(), SMD_FLOAT32, SMD_SUM, c[k],
                           nullptr));
    }
    SMD_OK(smd_group_end());
    for (int k = 0; k < kComms; ++k) {
      EXPECT_EQ(out[k].front(), float((k + 1) * size())) << "round " << round << " comm " << k;
      EXPECT_EQ(out[k].back(), float((k + 1) * size())) << "round " << round << " comm " << k;
    }
    for (auto &x : c) SMD_OK(smd_comm_destroy(x));
  }
}

TEST(Groups, GroupsArePerThread) {
  std::vector<float> a(8, 1.0f), b(8, 0.0f);
  SMD_OK(smd_group_start());
  smd_result_t other = SMD_SUCCESS;
  std::thread t([&] { other = smd_group_end(); });
  t.join();
  EXPECT_EQ(other, SMD_ERR_INVALID_USAGE) << "another thread has no open group";
  SMD_OK(smd_allreduce(a.data(), b.data(), a.size(), SMD_FLOAT32, SMD_SUM, world(), nullptr));
  SMD_OK(smd_group_end());
  EXPECT_EQ(b[0], float(size()));
}

// A request of this thread's open group waited on, then freed, from
// another thread: its group has not run, so each gets SMD_ERR_TIMEOUT at
// SMD_TIMEOUT (this program runs these under a short one: the
// group-np2-other-thread test) instead of waiting for ever. The group's
// thread joins that thread before smd_group_end: without the deadline,
// a deadlock. The request stays live and completes with the group.
TEST(GroupsOtherThread, WaitAndFreeGetTheDeadline) {
  std::vector<float> a(8, 1.0f), b(8, 0.0f);
  SMD_OK(smd_group_start());
  smd_request_t *r = nullptr;
  SMD_OK(smd_iallreduce(a.data(), b.data(), a.size(), SMD_FLOAT32, SMD_SUM, world(), nullptr, &r));
  smd_result_t waited = SMD_SUCCESS, freed = SMD_SUCCESS;
  std::string why;
  std::thread t([&] {
    waited = smd_request_wait(r);
    why = smd_last_error();
    freed = smd_request_free(r);
  });
  t.join();
  EXPECT_EQ(waited, SMD_ERR_TIMEOUT) << why;
  EXPECT_NE(why.find("another thread has open"), std::string::npos) << why;
  EXPECT_EQ(freed, SMD_ERR_TIMEOUT);
  SMD_OK(smd_group_end());
  SMD_OK(smd_request_wait(r));
  SMD_OK(smd_request_free(r));
  EXPECT_EQ(b[0], float(size()));
}

}  // namespace

int main(int argc, char **argv) {
  mptest::install(&argc, argv);
  return RUN_ALL_TESTS();
}
