// smd_alltoallv on the world of whatever size and layout smdrun gives
// (1-4 ranks on a node, fake nodes over tcp): uneven and zero counts,
// displacements with gaps, nonblocking calls, bad arguments, and pairs
// whose counts disagree (an error on the receiving rank, never wrong data
// or a hang).
#include <gtest/gtest.h>
#include <smd.h>

#include <numeric>
#include <string>
#include <vector>

#include "block_displs.h"
#include "mp_env.h"

using mptest::extent_of;

using mptest::rank;
using mptest::size;
using mptest::world;

namespace {

// Elements rank `from` sends rank `to`: uneven, some pairs zero, one pair
// large (several transport messages' worth).
size_t pair_count(int from, int to, int p) {
  if ((from + 2 * to) % 4 == 1) return 0;
  if (from == p - 1 && to == 0) return 200000 + 3;
  return 1 + size_t(from * 31 + to * 7) % 97;
}

int32_t value(int from, int to, size_t i) {
  return from * 1000000 + to * 10000 + int32_t(i % 9973);
}

std::vector<size_t> displs_of(const std::vector<size_t> &counts, bool gaps) {
  return gaps ? mptest::gapped_displs(counts) : mptest::packed_displs(counts);
}

struct Exchange {
  std::vector<size_t> scounts, rcounts, sdispls, rdispls;
  std::vector<int32_t> send, recv;
};

Exchange make_exchange(bool gaps, int salt) {
  int p = size(), me = rank();
  Exchange x;
  for (int r = 0; r < p; ++r) {
    x.scounts.push_back(pair_count(me, r, p) + size_t(salt));
    x.rcounts.push_back(pair_count(r, me, p) + size_t(salt));
  }
  x.sdispls = displs_of(x.scounts, gaps);
  x.rdispls = displs_of(x.rcounts, gaps);
  x.send.assign(extent_of(x.scounts, x.sdispls) + 1, -7);
  x.recv.assign(extent_of(x.rcounts, x.rdispls) + 1, -1);
  for (int r = 0; r < p; ++r)
    for (size_t i = 0; i < x.scounts[r]; ++i) x.send[x.sdispls[r] + i] = value(me, r, i) + salt;
  return x;
}

void check_exchange(const Exchange &x, int salt) {
  int p = size(), me = rank();
  std::vector<bool> inside(x.recv.size(), false);
  for (int r = 0; r < p; ++r)
    for (size_t i = 0; i < x.rcounts[r]; ++i) {
      inside[x.rdispls[r] + i] = true;
      ASSERT_EQ(x.recv[x.rdispls[r] + i], value(r, me, i) + salt)
          << "from " << r << " element " << i;
    }
  for (size_t i = 0; i < x.recv.size(); ++i)
    if (!inside[i]) {
      ASSERT_EQ(x.recv[i], -1) << "gap element " << i << " was written";
    }
}

class Alltoallv : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

TEST_P(Alltoallv, UnevenAndZeroCounts) {
  auto [gaps, nonblocking] = GetParam();
  Exchange x = make_exchange(gaps, 0);
  const size_t *sd = gaps ? x.sdispls.data() : nullptr, *rd = gaps ? x.rdispls.data() : nullptr;
  if (nonblocking) {
    smd_request_t *req = nullptr;
    SMD_OK(smd_ialltoallv(x.send.data(), x.scounts.data(), sd, x.recv.data(), x.rcounts.data(), rd,
                          SMD_INT32, world(), nullptr, &req));
    SMD_OK(smd_request_wait(req));
    SMD_OK(smd_request_free(req));
  } else {
    SMD_OK(smd_alltoallv(x.send.data(), x.scounts.data(), sd, x.recv.data(), x.rcounts.data(), rd,
                         SMD_INT32, world(), nullptr));
  }
  check_exchange(x, 0);
}

INSTANTIATE_TEST_SUITE_P(All, Alltoallv, ::testing::Combine(::testing::Bool(), ::testing::Bool()),
                         [](const auto &i) {
                           return std::string(std::get<0>(i.param) ? "gaps" : "packed") +
                                  (std::get<1>(i.param) ? "_nonblocking" : "_blocking");
                         });

TEST(AlltoallvMore, AllZero) {
  std::vector<size_t> zero(size_t(size()), 0);
  SMD_OK(smd_alltoallv(nullptr, zero.data(), nullptr, nullptr, zero.data(), nullptr, SMD_FLOAT32,
                       world(), nullptr));
}

// Several calls in flight at once, waited for in order: each one's blocks
// are its own.
TEST(AlltoallvMore, NonblockingBackToBack) {
  const int kCalls = 5;
  std::vector<Exchange> xs;
  std::vector<smd_request_t *> reqs(kCalls, nullptr);
  for (int k = 0; k < kCalls; ++k) xs.push_back(make_exchange(k % 2 == 1, k));
  for (int k = 0; k < kCalls; ++k) {
    Exchange &x = xs[size_t(k)];
    SMD_OK(smd_ialltoallv(x.send.data(), x.scounts.data(), x.sdispls.data(), x.recv.data(),
                          x.rcounts.data(), x.rdispls.data(), SMD_INT32, world(), nullptr,
                          &reqs[k]));
  }
  for (int k = 0; k < kCalls; ++k) {
    SMD_OK(smd_request_wait(reqs[k]));
    SMD_OK(smd_request_free(reqs[k]));
    check_exchange(xs[size_t(k)], k);
  }
}

// Bad arguments fail on the calling rank at once, naming the problem, and
// leave the communicator usable.
TEST(AlltoallvMore, BadArguments) {
  int p = size();
  std::vector<size_t> counts(size_t(p), 4), at0(size_t(p), 0);
  std::vector<float> send(size_t(p) * 4), recv(size_t(p) * 4);
  EXPECT_EQ(smd_alltoallv(send.data(), nullptr, nullptr, recv.data(), counts.data(), nullptr,
                          SMD_FLOAT32, world(), nullptr),
            SMD_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(smd_last_error()).find("sendcounts"), std::string::npos)
      << smd_last_error();
  EXPECT_EQ(smd_alltoallv(send.data(), counts.data(), nullptr, recv.data(), nullptr, nullptr,
                          SMD_FLOAT32, world(), nullptr),
            SMD_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(smd_last_error()).find("recvcounts"), std::string::npos)
      << smd_last_error();
  if (p > 1) {
    // Every receive block at 0: they overlap.
    EXPECT_EQ(smd_alltoallv(send.data(), counts.data(), nullptr, recv.data(), counts.data(),
                            at0.data(), SMD_FLOAT32, world(), nullptr),
              SMD_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(smd_last_error()).find("overlap"), std::string::npos) << smd_last_error();
  }
  // In place is not supported.
  EXPECT_EQ(smd_alltoallv(recv.data(), counts.data(), nullptr, recv.data(), counts.data(), nullptr,
                          SMD_FLOAT32, world(), nullptr),
            SMD_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(smd_last_error()).find("in place"), std::string::npos) << smd_last_error();
  EXPECT_EQ(smd_alltoallv(nullptr, counts.data(), nullptr, recv.data(), counts.data(), nullptr,
                          SMD_FLOAT32, world(), nullptr),
            SMD_ERR_INVALID_ARGUMENT);
  std::vector<size_t> huge(size_t(p), SIZE_MAX / 2);
  EXPECT_EQ(smd_alltoallv(send.data(), huge.data(), nullptr, recv.data(), counts.data(), nullptr,
                          SMD_FLOAT32, world(), nullptr),
            SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(smd_ialltoallv(send.data(), counts.data(), nullptr, recv.data(), counts.data(), nullptr,
                           SMD_FLOAT32, world(), nullptr, nullptr),
            SMD_ERR_INVALID_ARGUMENT);
  // Send blocks may overlap: they are only read.
  std::vector<float> one(4, 2.5f);
  SMD_OK(smd_alltoallv(one.data(), counts.data(), at0.data(), recv.data(), counts.data(), nullptr,
                       SMD_FLOAT32, world(), nullptr));
  for (float v : recv) ASSERT_EQ(v, 2.5f);
}

// One pair disagrees (the receiver expects more, or fewer, elements than
// the sender sends): the receiving rank gets SMD_ERR_TRUNCATED naming the
// pair, and so does the sending rank (the receiver's expectation travels
// beside the data); every other rank returns (none hangs) with success or
// an error, and no rank reports success with wrong data in the
// disagreeing block.
TEST(AlltoallvMore, DisagreeingPairIsTruncatedOnTheReceiver) {
  int p = size(), me = rank();
  for (int variant = 0; variant < 2; ++variant) {
    smd_comm_t *dup = nullptr;
    SMD_OK(smd_comm_dup(world(), &dup));
    std::vector<size_t> counts(size_t(p), 64), rcounts = counts;
    // Rank p-1 (rank 0 when alone) expects another size from rank 0.
    int receiver = p - 1;
    if (me == receiver) rcounts[0] = variant == 0 ? 80 : 40;
    size_t rtotal = std::accumulate(rcounts.begin(), rcounts.end(), size_t(0));
    std::vector<float> send(size_t(p) * 64, float(me)), recv(rtotal, -1.0f);
    smd_result_t r = smd_alltoallv(send.data(), counts.data(), nullptr, recv.data(), rcounts.data(),
                                   nullptr, SMD_FLOAT32, dup, nullptr);
    if (me == receiver) {
      EXPECT_EQ(r, SMD_ERR_TRUNCATED) << "variant " << variant << ": " << smd_last_error();
      EXPECT_NE(std::string(smd_last_error()).find("recvcounts"), std::string::npos)
          << smd_last_error();
    } else if (me == 0) {
      EXPECT_EQ(r, SMD_ERR_TRUNCATED)
          << "the sender, variant " << variant << ": " << smd_last_error();
    } else {
      EXPECT_TRUE(r == SMD_SUCCESS || r == SMD_ERR_TRUNCATED || r == SMD_ERR_MISMATCH ||
                  r == SMD_ERR_PEER_FAILURE || r == SMD_ERR_ABORTED)
          << "variant " << variant << ": " << r << " " << smd_last_error();
    }
    smd_comm_destroy(dup);
  }
  SMD_OK(smd_barrier(world(), nullptr));
}

// A rank calling another datatype is a mismatch (the call check still
// compares everything but the counts).
TEST(AlltoallvMore, OtherDatatypeIsAMismatch) {
  int p = size(), me = rank();
  if (p < 2) GTEST_SKIP() << "needs two ranks";
  smd_comm_t *dup = nullptr;
  SMD_OK(smd_comm_dup(world(), &dup));
  std::vector<size_t> counts(size_t(p), 16);
  std::vector<int32_t> send(size_t(p) * 16, me), recv(size_t(p) * 16, 0);
  smd_result_t r = smd_alltoallv(send.data(), counts.data(), nullptr, recv.data(), counts.data(),
                                 nullptr, me == 0 ? SMD_FLOAT32 : SMD_INT32, dup, nullptr);
  EXPECT_NE(r, SMD_SUCCESS);
  smd_comm_destroy(dup);
  SMD_OK(smd_barrier(world(), nullptr));
}

}  // namespace

int main(int argc, char **argv) {
  mptest::install(&argc, argv);
  return RUN_ALL_TESTS();
}
