// Blocking calls of a communicator's only thread run without locks
// (src/core/exec/sole_user.h). What must still hold when a second thread,
// a nonblocking call or a destroy comes along: results stay right, calls
// of two threads on one communicator still run one at a time, and a
// destroyed handle is refused (never used from a thread's stale cache),
// also when a new communicator takes the old handle's address. Run with
// and without SMD_FAST_PATH=0.
#include <gtest/gtest.h>
#include <smd.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "mp_env.h"

using mptest::rank;
using mptest::size;
using mptest::world;

namespace {

// `calls` allreduces whose sum does not depend on which call of a peer
// each one meets: every rank adds 1.
int run_ones(smd_comm_t *c, int calls) {
  int bad = 0;
  for (int i = 0; i < calls; ++i) {
    int32_t one = 1, sum = 0;
    if (smd_allreduce(&one, &sum, 1, SMD_INT32, SMD_SUM, c, nullptr) != SMD_SUCCESS ||
        sum != size())
      ++bad;
  }
  return bad;
}

TEST(SoleUser, HandedFromThreadToThread) {
  smd_comm_t *c = nullptr;
  SMD_OK(smd_comm_dup(world(), &c));
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(run_ones(c, 500), 0) << "main thread, round " << round;
    int bad = -1;
    std::thread other([&] { bad = run_ones(c, 500); });
    other.join();
    EXPECT_EQ(bad, 0) << "second thread, round " << round;
  }
  SMD_OK(smd_comm_destroy(c));
}

// Two threads of every rank call at once: each call must still meet
// exactly one call of each peer (a call that ran beside another on the
// same communicator would corrupt both).
TEST(SoleUser, TwoThreadsAtOnce) {
  smd_comm_t *c = nullptr;
  SMD_OK(smd_comm_dup(world(), &c));
  EXPECT_EQ(run_ones(c, 200), 0);  // biased to this thread first
  std::atomic<int> bad{0};
  std::thread other([&] { bad += run_ones(c, 2000); });
  bad += run_ones(c, 2000);
  other.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(run_ones(c, 200), 0);
  SMD_OK(smd_comm_destroy(c));
}

TEST(SoleUser, NonblockingAfterBlocking) {
  smd_comm_t *c = nullptr;
  SMD_OK(smd_comm_dup(world(), &c));
  EXPECT_EQ(run_ones(c, 300), 0);
  for (int i = 0; i < 50; ++i) {
    int32_t one = 1, sum = 0;
    smd_request_t *req = nullptr;
    SMD_OK(smd_iallreduce(&one, &sum, 1, SMD_INT32, SMD_SUM, c, nullptr, &req));
    EXPECT_EQ(run_ones(c, 3), 0);  // queued behind the nonblocking one
    SMD_OK(smd_request_wait(req));
    SMD_OK(smd_request_free(req));
    EXPECT_EQ(sum, size());
  }
  SMD_OK(smd_comm_destroy(c));
}

// The handle is destroyed by another thread than the one whose cache
// holds it; the next call of that thread must be refused, not run on
// freed memory. A new communicator may then get the same address.
TEST(SoleUser, DestroyedHandleIsRefusedAfterReuse) {
  for (int round = 0; round < 20; ++round) {
    smd_comm_t *c = nullptr;
    SMD_OK(smd_comm_dup(world(), &c));
    EXPECT_EQ(run_ones(c, 20), 0);
    smd_result_t destroyed = SMD_ERR_INTERNAL;
    std::thread other([&] { destroyed = smd_comm_destroy(c); });
    other.join();
    ASSERT_EQ(destroyed, SMD_SUCCESS);
    int32_t one = 1, sum = 0;
    EXPECT_EQ(smd_allreduce(&one, &sum, 1, SMD_INT32, SMD_SUM, c, nullptr), SMD_ERR_INVALID_USAGE)
        << smd_last_error();
    smd_comm_t *again = nullptr;
    SMD_OK(smd_comm_dup(world(), &again));
    EXPECT_EQ(run_ones(again, 20), 0);
    SMD_OK(smd_comm_destroy(again));
  }
}

// Several communicators used in turn by one thread: each call finds its
// own (the cache holds one handle at a time).
TEST(SoleUser, CommunicatorsInTurn) {
  std::vector<smd_comm_t *> comms(3, nullptr);
  for (auto &c : comms) SMD_OK(smd_comm_dup(world(), &c));
  for (int i = 0; i < 300; ++i) {
    smd_comm_t *c = comms[static_cast<size_t>(i) % comms.size()];
    int32_t mine = rank() + i, sum = 0;
    SMD_OK(smd_allreduce(&mine, &sum, 1, SMD_INT32, SMD_SUM, c, nullptr));
    ASSERT_EQ(sum, size() * i + size() * (size() - 1) / 2) << "call " << i;
  }
  for (auto *c : comms) SMD_OK(smd_comm_destroy(c));
}

}  // namespace

int main(int argc, char **argv) {
  mptest::install(&argc, argv);
  return RUN_ALL_TESTS();
}
