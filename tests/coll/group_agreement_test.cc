// Ranks whose groups differ (smd_group_start/end) get SMD_ERR_MISMATCH on
// every rank, naming the first differing call, whatever the path: fused
// allreduces whose packed totals pad alike, the same calls in another
// order, another number of calls, a group on one communicator of two.
// Every case runs on a fresh duplicate of the world (a mismatch poisons
// its communicator). Registered over shm (the arena), SMD_ALGO=ring,
// SMD_CHECK=full, tcp with every rank its own node, and 2 fake nodes of
// shm+tcp (hierarchical).
#include <gtest/gtest.h>
#include <smd.h>

#include <string>
#include <vector>

#include "mp_env.h"

using mptest::rank;
using mptest::size;
using mptest::world;

namespace {

bool last_rank() { return rank() == size() - 1; }

// Grouped allreduces of float32 of these counts on c; returns
// smd_group_end's result, the message in *why.
smd_result_t grouped_allreduces(smd_comm_t *c, const std::vector<size_t> &counts,
                                std::string *why) {
  std::vector<std::vector<float>> in, out;
  for (size_t n : counts) {
    in.emplace_back(n, float(rank() + 1));
    out.emplace_back(n, -1.0f);
  }
  smd_group_start();
  for (size_t i = 0; i < counts.size(); ++i) {
    smd_result_t r =
        smd_allreduce(in[i].data(), out[i].data(), counts[i], SMD_FLOAT32, SMD_SUM, c, nullptr);
    if (r != SMD_SUCCESS) ADD_FAILURE() << "queueing: " << smd_last_error();
  }
  smd_result_t r = smd_group_end();
  *why = r == SMD_SUCCESS ? "" : smd_last_error();
  if (r == SMD_SUCCESS) {
    float sum = float(size() * (size() + 1) / 2);
    for (size_t i = 0; i < counts.size(); ++i)
      for (size_t k = 0; k < counts[i]; ++k)
        if (out[i][k] != sum) {
          ADD_FAILURE() << "call " << i + 1 << " element " << k << ": " << out[i][k]
                        << ", expected " << sum;
          return r;
        }
  }
  return r;
}

// Runs one case on a fresh duplicate of the world: `mine` on every rank
// but the last, `last` there; every rank must end with SMD_ERR_MISMATCH
// and a message that contains `names` (when not empty).
void expect_mismatch(const std::vector<size_t> &mine, const std::vector<size_t> &last,
                     const char *names) {
  smd_comm_t *c = nullptr;
  SMD_OK(smd_comm_dup(world(), &c));
  std::string why;
  smd_result_t r = grouped_allreduces(c, last_rank() ? last : mine, &why);
  EXPECT_EQ(r, SMD_ERR_MISMATCH) << why;
  if (*names) {
    EXPECT_NE(why.find(names), std::string::npos) << why;
  }
  SMD_OK(smd_comm_destroy(c));
  SMD_OK(smd_barrier(world(), nullptr));
}

// The reproducer: 10 and 10 elements against 10 and 12, whose
// fused totals pad to the same length.
TEST(GroupAgreement, FusedTotalsThatPadAlike) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  expect_mismatch({10, 10}, {10, 12}, "differ at their collective 2");
}

TEST(GroupAgreement, SameCallsInAnotherOrder) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  expect_mismatch({10, 12, 7}, {10, 7, 12}, "differ at their collective 2");
}

TEST(GroupAgreement, AnotherNumberOfCalls) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  expect_mismatch({4, 4, 4}, {6, 6}, "differ at their collective 1");
  expect_mismatch({4, 4, 4}, {4, 4}, "differ at their collective 3");
}

// Calls that are not fused (each checked on its own already): a group of
// two against a group of one followed by the same call outside it.
TEST(GroupAgreement, GroupedAgainstSplitAcrossGroupEnd) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  smd_comm_t *c = nullptr;
  SMD_OK(smd_comm_dup(world(), &c));
  std::vector<float> in(4, 1.0f), out(4 * size_t(size()), 0.0f), out2(out);
  smd_group_start();
  SMD_OK(smd_allgather(in.data(), out.data(), 4, SMD_FLOAT32, c, nullptr));
  if (!last_rank()) SMD_OK(smd_allgather(in.data(), out2.data(), 4, SMD_FLOAT32, c, nullptr));
  smd_result_t r = smd_group_end();
  EXPECT_EQ(r, SMD_ERR_MISMATCH) << smd_last_error();
  if (r == SMD_ERR_MISMATCH) {
    EXPECT_NE(std::string(smd_last_error()).find("differ at their collective 2"), std::string::npos)
        << smd_last_error();
  }
  if (last_rank()) {
    // The communicator is poisoned: the rest fails too, never succeeds.
    EXPECT_NE(smd_allgather(in.data(), out2.data(), 4, SMD_FLOAT32, c, nullptr), SMD_SUCCESS);
  }
  SMD_OK(smd_comm_destroy(c));
  SMD_OK(smd_barrier(world(), nullptr));
}

// A group over two communicators whose ranks agree on the first and not on
// the second: every rank fails, and the first stays usable.
TEST(GroupAgreement, TwoCommunicatorsOneDiffers) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  smd_comm_t *a = nullptr, *b = nullptr;
  SMD_OK(smd_comm_dup(world(), &a));
  SMD_OK(smd_comm_dup(world(), &b));
  std::vector<float> x(10, 1.0f), y(12, 1.0f), ox(10), oy(12), p(10, 1.0f), op(10);
  smd_group_start();
  SMD_OK(smd_allreduce(p.data(), op.data(), 10, SMD_FLOAT32, SMD_SUM, a, nullptr));
  SMD_OK(smd_allreduce(x.data(), ox.data(), 10, SMD_FLOAT32, SMD_SUM, b, nullptr));
  SMD_OK(smd_allreduce(p.data(), op.data(), 10, SMD_FLOAT32, SMD_MAX, a, nullptr));
  if (last_rank()) {
    SMD_OK(smd_allreduce(y.data(), oy.data(), 12, SMD_FLOAT32, SMD_SUM, b, nullptr));
  } else {
    SMD_OK(smd_allreduce(x.data(), ox.data(), 10, SMD_FLOAT32, SMD_SUM, b, nullptr));
  }
  smd_result_t r = smd_group_end();
  EXPECT_EQ(r, SMD_ERR_MISMATCH) << smd_last_error();
  EXPECT_NE(std::string(smd_last_error()).find("differ at their collective 2"), std::string::npos)
      << smd_last_error();
  // The first communicator's calls agreed: it ran them and stays usable.
  SMD_OK(smd_allreduce(p.data(), op.data(), 10, SMD_FLOAT32, SMD_SUM, a, nullptr));
  EXPECT_EQ(op[0], float(size()));
  SMD_OK(smd_comm_destroy(a));
  SMD_OK(smd_comm_destroy(b));
  SMD_OK(smd_barrier(world(), nullptr));
}

// Groups that agree still run, fused and not, with the right results,
// back to back on one communicator (their subjects change every group).
TEST(GroupAgreement, AgreeingGroupsRun) {
  smd_comm_t *c = nullptr;
  SMD_OK(smd_comm_dup(world(), &c));
  std::string why;
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(grouped_allreduces(c, {10, 12, 1}, &why), SMD_SUCCESS) << why;
    EXPECT_EQ(grouped_allreduces(c, {3}, &why), SMD_SUCCESS) << why;
    EXPECT_EQ(grouped_allreduces(c, {1 << 20, 5}, &why), SMD_SUCCESS) << why;
  }
  SMD_OK(smd_comm_destroy(c));
}

}  // namespace

int main(int argc, char **argv) {
  mptest::install(&argc, argv);
  return RUN_ALL_TESTS();
}
