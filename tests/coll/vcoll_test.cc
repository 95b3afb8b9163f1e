// Collectives with per-rank counts (allgatherv, reduce_scatterv) and
// receives from any source, on the world of whatever size and layout
// smdrun gives (1-4 ranks on a node, fake nodes over tcp or ucx).
#include <gtest/gtest.h>
#include <smd.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "mp_env.h"

using mptest::rank;
using mptest::size;
using mptest::world;

namespace {

// How the ranks' counts are made: all equal, uneven, some zero, all zero,
// one large block (several arena rounds, ring pieces) among small ones.
enum class Shape { kEqual, kUneven, kSomeZero, kAllZero, kOneLarge };
const Shape kShapes[] = {Shape::kEqual, Shape::kUneven, Shape::kSomeZero, Shape::kAllZero,
                         Shape::kOneLarge};
const char *shape_name(Shape s) {
  const char *n[] = {"equal", "uneven", "some_zero", "all_zero", "one_large"};
  return n[static_cast<int>(s)];
}

std::vector<size_t> counts_of(Shape s, int p) {
  std::vector<size_t> c(size_t(p), 0);
  for (int r = 0; r < p; ++r) {
    switch (s) {
      case Shape::kEqual: c[r] = 1000; break;
      case Shape::kUneven: c[r] = 1 + 37 * size_t(r) * size_t(r) + (r % 2 ? 500 : 3); break;
      case Shape::kSomeZero: c[r] = r % 2 ? 0 : 100 + size_t(r); break;
      case Shape::kAllZero: c[r] = 0; break;
      case Shape::kOneLarge: c[r] = r == p - 1 ? 300000 + 7 : 5; break;
    }
  }
  return c;
}

// Displacements: packed (NULL), or the blocks in reverse rank order with
// gaps between them.
std::vector<size_t> gapped_displs(const std::vector<size_t> &counts) {
  std::vector<size_t> d(counts.size());
  size_t at = 3;
  for (size_t i = counts.size(); i-- > 0;) {
    d[i] = at;
    at += counts[i] + 5;
  }
  return d;
}

size_t extent_of(const std::vector<size_t> &counts, const std::vector<size_t> &displs) {
  size_t e = 0;
  for (size_t i = 0; i < counts.size(); ++i) e = std::max(e, displs[i] + counts[i]);
  return e;
}

std::vector<size_t> packed_displs(const std::vector<size_t> &counts) {
  std::vector<size_t> d(counts.size());
  std::exclusive_scan(counts.begin(), counts.end(), d.begin(), size_t(0));
  return d;
}

// Element i of rank r's block as rank `from` contributes it: exact in
// float32 even when summed over four ranks.
float value(int r, size_t i, int from) { return float(r * 1000 + int(i % 997) + from * 3); }

struct VParam {
  Shape shape;
  bool gaps;      // displs with gaps, blocks in reverse order; else NULL (packed)
  bool in_place;
  bool nonblocking;
};

std::string vparam_name(const ::testing::TestParamInfo<VParam> &i) {
  return std::string(shape_name(i.param.shape)) + (i.param.gaps ? "_gaps" : "_packed") +
         (i.param.in_place ? "_inplace" : "") + (i.param.nonblocking ? "_nonblocking" : "");
}

std::vector<VParam> all_vparams() {
  std::vector<VParam> v;
  for (Shape s : kShapes)
    for (bool gaps : {false, true})
      for (bool in_place : {false, true}) v.push_back({s, gaps, in_place, gaps && !in_place});
  return v;
}

struct Blocks {
  std::vector<size_t> counts, displs;
  const size_t *displs_arg;  // what the call gets: NULL when packed
};
Blocks blocks_of(const VParam &v, int p) {
  Blocks b;
  b.counts = counts_of(v.shape, p);
  b.displs = v.gaps ? gapped_displs(b.counts) : packed_displs(b.counts);
  b.displs_arg = v.gaps ? b.displs.data() : nullptr;
  return b;
}

class VCollectives : public ::testing::TestWithParam<VParam> {};

// (The request is read after the call that sets it has run.)
void finish(smd_result_t started, smd_request_t *const &req) {
  ASSERT_EQ(started, SMD_SUCCESS) << smd_last_error();
  if (req) {
    ASSERT_EQ(smd_request_wait(req), SMD_SUCCESS) << smd_last_error();
    ASSERT_EQ(smd_request_free(req), SMD_SUCCESS);
  }
}

TEST_P(VCollectives, Allgatherv) {
  const VParam &v = GetParam();
  int p = size(), me = rank();
  Blocks b = blocks_of(v, p);
  const std::vector<size_t> &counts = b.counts, &displs = b.displs;
  const size_t *d = b.displs_arg;
  std::vector<float> recv(extent_of(counts, displs) + 1, -1.0f);
  std::vector<float> send(counts[me]);
  for (size_t i = 0; i < counts[me]; ++i) send[i] = value(me, i, 0);
  const float *src = send.data();
  if (v.in_place) {
    std::copy(send.begin(), send.end(), recv.begin() + long(displs[me]));
    src = recv.data() + displs[me];
  }
  smd_request_t *req = nullptr;
  if (v.nonblocking)
    finish(smd_iallgatherv(src, recv.data(), counts.data(), d, SMD_FLOAT32, world(), nullptr, &req),
           req);
  else
    finish(smd_allgatherv(src, recv.data(), counts.data(), d, SMD_FLOAT32, world(), nullptr), req);
  std::vector<bool> inside(recv.size(), false);
  for (int r = 0; r < p; ++r)
    for (size_t i = 0; i < counts[r]; ++i) {
      inside[displs[r] + i] = true;
      ASSERT_EQ(recv[displs[r] + i], value(r, i, 0)) << "block " << r << " element " << i;
    }
  for (size_t i = 0; i < recv.size(); ++i)
    if (!inside[i]) ASSERT_EQ(recv[i], -1.0f) << "gap element " << i << " was written";
}

TEST_P(VCollectives, ReduceScatterv) {
  const VParam &v = GetParam();
  int p = size(), me = rank();
  Blocks b = blocks_of(v, p);
  const std::vector<size_t> &counts = b.counts, &displs = b.displs;
  const size_t *d = b.displs_arg;
  std::vector<float> send(extent_of(counts, displs) + 1, -1.0f);
  for (int r = 0; r < p; ++r)
    for (size_t i = 0; i < counts[r]; ++i) send[displs[r] + i] = value(r, i, me);
  std::vector<float> recv_storage(counts[me], -1.0f);
  float *dst = v.in_place ? send.data() + displs[me] : recv_storage.data();
  smd_op_t op = v.gaps ? SMD_AVG : SMD_SUM;
  smd_request_t *req = nullptr;
  if (v.nonblocking)
    finish(smd_ireduce_scatterv(send.data(), dst, counts.data(), d, SMD_FLOAT32, op, world(),
                                nullptr, &req),
           req);
  else
    finish(smd_reduce_scatterv(send.data(), dst, counts.data(), d, SMD_FLOAT32, op, world(), nullptr),
           req);
  for (size_t i = 0; i < counts[me]; ++i) {
    float sum = 0;
    for (int from = 0; from < p; ++from) sum += value(me, i, from);
    float want = op == SMD_AVG ? sum / float(p) : sum;
    ASSERT_NEAR(dst[i], want, 1e-3f * std::max(1.0f, want)) << "element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(All, VCollectives, ::testing::ValuesIn(all_vparams()), vparam_name);

// Many v-collectives back to back, nonblocking, then waited for in order:
// each one's blocks are its own.
TEST(VCollectivesMore, NonblockingBackToBack) {
  int p = size(), me = rank();
  const int kCalls = 6;
  std::vector<std::vector<size_t>> counts(kCalls);
  std::vector<std::vector<int32_t>> send(kCalls), recv(kCalls);
  std::vector<smd_request_t *> reqs(kCalls, nullptr);
  for (int k = 0; k < kCalls; ++k) {
    for (int r = 0; r < p; ++r) counts[k].push_back(size_t((r + k) % 3) * 17);
    send[k].assign(counts[k][me], me * 100 + k);
    recv[k].assign(std::accumulate(counts[k].begin(), counts[k].end(), size_t(0)), -1);
    ASSERT_EQ(smd_iallgatherv(send[k].data(), recv[k].data(), counts[k].data(), nullptr, SMD_INT32,
                              world(), nullptr, &reqs[k]),
              SMD_SUCCESS)
        << smd_last_error();
  }
  for (int k = 0; k < kCalls; ++k) {
    SMD_OK(smd_request_wait(reqs[k]));
    SMD_OK(smd_request_free(reqs[k]));
    size_t at = 0;
    for (int r = 0; r < p; ++r)
      for (size_t i = 0; i < counts[k][r]; ++i) ASSERT_EQ(recv[k][at++], r * 100 + k);
  }
}

// Bad arguments fail on the calling rank at once, naming the problem, and
// leave the communicator usable.
TEST(VCollectivesMore, BadArguments) {
  int p = size();
  std::vector<size_t> counts(size_t(p), 4), displs(size_t(p), 0);
  std::vector<float> buf(size_t(p) * 4 + 8);
  EXPECT_EQ(smd_allgatherv(buf.data(), buf.data() + 1, nullptr, nullptr, SMD_FLOAT32, world(), nullptr),
            SMD_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(smd_last_error()).find("counts"), std::string::npos) << smd_last_error();
  if (p > 1) {
    // Every block at 0: they overlap.
    EXPECT_EQ(smd_reduce_scatterv(buf.data(), buf.data(), counts.data(), displs.data(), SMD_FLOAT32,
                                  SMD_SUM, world(), nullptr),
              SMD_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(smd_last_error()).find("overlap"), std::string::npos) << smd_last_error();
  }
  EXPECT_EQ(smd_allgatherv(nullptr, buf.data(), counts.data(), nullptr, SMD_FLOAT32, world(), nullptr),
            SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(smd_reduce_scatterv(buf.data(), buf.data() + 1, counts.data(), nullptr, SMD_FLOAT32,
                                static_cast<smd_op_t>(99), world(), nullptr),
            SMD_ERR_INVALID_ARGUMENT);
  smd_request_t *req = nullptr;
  EXPECT_EQ(smd_iallgatherv(buf.data(), buf.data(), counts.data(), nullptr, SMD_FLOAT32, world(),
                            nullptr, nullptr),
            SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(req, nullptr);
  SMD_OK(smd_barrier(world(), nullptr));
}

// One rank passes other counts (the same total, or a different one): every
// rank gets SMD_ERR_MISMATCH, whatever the algorithm, never wrong data.
TEST(VCollectivesMore, DifferentCountsAreAMismatchOnEveryRank) {
  int p = size(), me = rank();
  if (p < 2) GTEST_SKIP() << "needs two ranks";
  for (int variant = 0; variant < 4; ++variant) {
    smd_comm_t *dup = nullptr;
    SMD_OK(smd_comm_dup(world(), &dup));
    std::vector<size_t> counts(size_t(p), 64);
    if (me == p - 1) {
      if (variant % 2 == 0) {
        counts[0] += 8;  // same total
        counts[1] -= 8;
      } else {
        counts[0] += 3;  // another total
      }
    }
    size_t total = std::accumulate(counts.begin(), counts.end(), size_t(0));
    std::vector<float> send(total, 1.0f), recv(total, 0.0f);
    smd_result_t r;
    if (variant < 2)
      r = smd_allgatherv(send.data(), recv.data(), counts.data(), nullptr, SMD_FLOAT32, dup, nullptr);
    else
      r = smd_reduce_scatterv(send.data(), recv.data(), counts.data(), nullptr, SMD_FLOAT32, SMD_SUM,
                              dup, nullptr);
    EXPECT_EQ(r, SMD_ERR_MISMATCH) << "variant " << variant << ": " << smd_last_error();
    SMD_OK(smd_comm_destroy(dup));
  }
  SMD_OK(smd_barrier(world(), nullptr));
}

}  // namespace

int main(int argc, char **argv) {
  mptest::install(&argc, argv);
  return RUN_ALL_TESTS();
}
