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

#include "block_displs.h"
#include "mp_env.h"

using mptest::extent_of;
using mptest::gapped_displs;
using mptest::packed_displs;
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

// Element i of rank r's block as rank `from` contributes it: exact in
// float32 even when summed over four ranks.
float value(int r, size_t i, int from) { return float(r * 1000 + int(i % 997) + from * 3); }

struct VParam {
  Shape shape;
  bool gaps;  // displs with gaps, blocks in reverse order; else NULL (packed)
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
    if (!inside[i]) {
      ASSERT_EQ(recv[i], -1.0f) << "gap element " << i << " was written";
    }
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
    finish(
        smd_reduce_scatterv(send.data(), dst, counts.data(), d, SMD_FLOAT32, op, world(), nullptr),
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
  EXPECT_EQ(
      smd_allgatherv(buf.data(), buf.data() + 1, nullptr, nullptr, SMD_FLOAT32, world(), nullptr),
      SMD_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(smd_last_error()).find("counts"), std::string::npos) << smd_last_error();
  if (p > 1) {
    // Every block at 0: they overlap.
    EXPECT_EQ(smd_reduce_scatterv(buf.data(), buf.data(), counts.data(), displs.data(), SMD_FLOAT32,
                                  SMD_SUM, world(), nullptr),
              SMD_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(smd_last_error()).find("overlap"), std::string::npos) << smd_last_error();
  }
  EXPECT_EQ(
      smd_allgatherv(nullptr, buf.data(), counts.data(), nullptr, SMD_FLOAT32, world(), nullptr),
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
      r = smd_allgatherv(send.data(), recv.data(), counts.data(), nullptr, SMD_FLOAT32, dup,
                         nullptr);
    else
      r = smd_reduce_scatterv(send.data(), recv.data(), counts.data(), nullptr, SMD_FLOAT32,
                              SMD_SUM, dup, nullptr);
    EXPECT_EQ(r, SMD_ERR_MISMATCH) << "variant " << variant << ": " << smd_last_error();
    SMD_OK(smd_comm_destroy(dup));
  }
  SMD_OK(smd_barrier(world(), nullptr));
}

// ---- Receives from any source -------------------------------------------

// Message k of sender s: its length (some large enough for the transports'
// rendezvous protocols) and contents [s, k, s, k, ...].
size_t message_len(int s, int k) {
  return k % 5 == 3 ? 100000 + size_t(s) : 2 + size_t((s * 7 + k * 37) % 300);
}

// Nonblocking, then waited for: a blocking send of a large message may
// wait for its receive, which a receiver taking another tag first would
// not post.
void send_messages(int to, int tag_base, int n) {
  int me = rank();
  std::vector<std::vector<int32_t>> msgs(static_cast<size_t>(n));
  std::vector<smd_request_t *> reqs(size_t(n), nullptr);
  for (int k = 0; k < n; ++k) {
    std::vector<int32_t> &m = msgs[size_t(k)];
    m.resize(message_len(me, k));
    for (size_t i = 0; i < m.size(); ++i) m[i] = i % 2 ? k : me;
    ASSERT_EQ(smd_isend(m.data(), m.size(), SMD_INT32, to, tag_base + k % 3, world(), nullptr,
                        &reqs[size_t(k)]),
              SMD_SUCCESS)
        << smd_last_error();
  }
  for (smd_request_t *r : reqs) {
    SMD_OK(smd_request_wait(r));
    SMD_OK(smd_request_free(r));
  }
}

// Checks one received message against its status; returns (sender, k).
std::pair<int, int> check_message(const std::vector<int32_t> &buf, const smd_status_t &st,
                                  int tag_base) {
  int s = buf[0], k = buf[1];
  EXPECT_EQ(st.source, s);
  EXPECT_EQ(st.tag, tag_base + k % 3);
  EXPECT_EQ(st.count, message_len(s, k));
  EXPECT_EQ(st.bytes, message_len(s, k) * sizeof(int32_t));
  for (size_t i = 0; i < st.count; ++i)
    if (buf[i] != (i % 2 ? k : s)) {
      ADD_FAILURE() << "element " << i << " of message " << k << " from " << s;
      break;
    }
  return {s, k};
}

// Every rank but the receiver sends; the receiver takes everything with
// SMD_ANY_SOURCE (blocking with a status, and nonblocking), each message
// exactly once, each sender's messages of one tag in the order sent.
TEST(AnySource, SeveralSendersRacing) {
  int p = size(), me = rank();
  const int kPerSender = 12, kTagBase = 40;
  for (int receiver : std::set<int>{0, p - 1}) {
    if (me != receiver) {
      send_messages(receiver, kTagBase, kPerSender);
    } else {
      int expected = (p - 1) * kPerSender;
      std::set<std::pair<int, int>> seen;
      std::vector<std::vector<int>> last(size_t(p), std::vector<int>(3, -1));
      std::vector<int32_t> buf(100000 + size_t(p));
      for (int got = 0; got < expected; ++got) {
        smd_status_t st = SMD_STATUS_INIT;
        if (got % 2 == 0) {
          // Any tag too, every other time.
          SMD_OK(smd_recv_status(buf.data(), buf.size(), SMD_INT32, SMD_ANY_SOURCE,
                                 got % 4 == 0 ? SMD_ANY_TAG : kTagBase + (got / 2) % 3, world(),
                                 nullptr, &st));
        } else {
          smd_request_t *req = nullptr;
          SMD_OK(smd_irecv(buf.data(), buf.size(), SMD_INT32, SMD_ANY_SOURCE, SMD_ANY_TAG, world(),
                           nullptr, &req));
          SMD_OK(smd_request_wait(req));
          SMD_OK(smd_request_get_status(req, &st));
          size_t count = 0;
          SMD_OK(smd_request_get_count(req, &count));
          EXPECT_EQ(count, st.count);
          SMD_OK(smd_request_free(req));
        }
        auto id = check_message(buf, st, kTagBase);
        EXPECT_TRUE(seen.insert(id).second)
            << "message " << id.second << " of " << id.first << " twice";
        int &prev = last[size_t(id.first)][size_t(id.second % 3)];
        EXPECT_GT(id.second, prev) << "messages of one sender and tag out of order";
        prev = id.second;
      }
      EXPECT_EQ(seen.size(), size_t(expected));
    }
    SMD_OK(smd_barrier(world(), nullptr));
  }
}

// Directed and any-source receives posted together: the directed one
// takes its sender's first message, the any-source ones the rest, in the
// order posted; a message to self is matched like any other.
TEST(AnySource, MixedWithDirectedReceives) {
  int p = size(), me = rank();
  const int kPerSender = 4, kTag = 9;
  if (me != 0) {
    send_messages(0, kTag, kPerSender);  // tags kTag .. kTag+2
  } else {
    int32_t self_msg[2] = {0, 0};
    SMD_OK(smd_send(self_msg, 2, SMD_INT32, 0, kTag, world(), nullptr));
    int total = (p - 1) * kPerSender + 1;
    std::vector<std::vector<int32_t>> bufs(size_t(total), std::vector<int32_t>(100000 + size_t(p)));
    std::vector<smd_request_t *> reqs(size_t(total), nullptr);
    int directed_from = p > 1 ? 1 : 0;
    SMD_OK(smd_irecv(bufs[0].data(), bufs[0].size(), SMD_INT32, directed_from, kTag, world(),
                     nullptr, &reqs[0]));
    for (int i = 1; i < total; ++i)
      SMD_OK(smd_irecv(bufs[i].data(), bufs[i].size(), SMD_INT32, SMD_ANY_SOURCE, SMD_ANY_TAG,
                       world(), nullptr, &reqs[i]));
    std::set<std::pair<int, int>> seen;
    for (int i = 0; i < total; ++i) {
      SMD_OK(smd_request_wait(reqs[i]));
      smd_status_t st = SMD_STATUS_INIT;
      SMD_OK(smd_request_get_status(reqs[i], &st));
      SMD_OK(smd_request_free(reqs[i]));
      if (i == 0) {
        EXPECT_EQ(st.source, directed_from);
        EXPECT_EQ(bufs[0][1], 0) << "the directed receive takes its sender's first message";
      }
      if (st.source == 0 && st.count == 2) {
        EXPECT_TRUE(seen.insert({0, -1}).second);
        continue;
      }
      EXPECT_TRUE(seen.insert(check_message(bufs[i], st, kTag)).second);
    }
    EXPECT_EQ(seen.size(), size_t(total));
  }
  SMD_OK(smd_barrier(world(), nullptr));
}

// A message larger than the buffer fails the any-source receive with
// SMD_ERR_TRUNCATED, naming its sender and size in the status; the next
// message is received normally.
TEST(AnySource, TruncatedMessageAndStatus) {
  int p = size(), me = rank();
  int from = p - 1;
  if (me == from) {
    std::vector<int32_t> big(50, 7), small(3, 8);
    SMD_OK(smd_send(big.data(), big.size(), SMD_INT32, 0, 1, world(), nullptr));
    SMD_OK(smd_send(small.data(), small.size(), SMD_INT32, 0, 2, world(), nullptr));
  }
  if (me == 0) {
    std::vector<int32_t> buf(10, 0);
    smd_status_t st = SMD_STATUS_INIT;
    EXPECT_EQ(smd_recv_status(buf.data(), buf.size(), SMD_INT32, SMD_ANY_SOURCE, SMD_ANY_TAG,
                              world(), nullptr, &st),
              SMD_ERR_TRUNCATED);
    EXPECT_EQ(st.source, from);
    EXPECT_EQ(st.tag, 1);
    EXPECT_EQ(st.count, 50u);
    SMD_OK(smd_recv_status(buf.data(), buf.size(), SMD_INT32, SMD_ANY_SOURCE, SMD_ANY_TAG, world(),
                           nullptr, &st));
    EXPECT_EQ(st.source, from);
    EXPECT_EQ(st.tag, 2);
    EXPECT_EQ(st.count, 3u);
    EXPECT_EQ(buf[2], 8);
  }
  SMD_OK(smd_barrier(world(), nullptr));
}

TEST(AnySource, BadArguments) {
  int x = 0;
  EXPECT_EQ(smd_send(&x, 1, SMD_INT32, SMD_ANY_SOURCE, 0, world(), nullptr),
            SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(smd_send(&x, 1, SMD_INT32, 0, SMD_ANY_TAG, world(), nullptr), SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(smd_recv(&x, 1, SMD_INT32, -7, 0, world(), nullptr), SMD_ERR_INVALID_ARGUMENT);
  smd_status_t st;
  st.struct_size = 0;
  st.version = SMD_STATUS_VERSION;
  EXPECT_EQ(smd_recv_status(&x, 1, SMD_INT32, SMD_ANY_SOURCE, 0, world(), nullptr, &st),
            SMD_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(smd_last_error()).find("struct_size"), std::string::npos);
  SMD_OK(smd_status_init(&st));
  EXPECT_EQ(st.struct_size, sizeof(smd_status_t));
  EXPECT_EQ(st.source, -1);
  // A collective's request has a status without a source.
  smd_request_t *req = nullptr;
  SMD_OK(smd_iallreduce(&x, &x, 1, SMD_INT32, SMD_SUM, world(), nullptr, &req));
  SMD_OK(smd_request_wait(req));
  SMD_OK(smd_request_get_status(req, &st));
  EXPECT_EQ(st.source, -1);
  EXPECT_EQ(st.count, 1u);
  SMD_OK(smd_request_free(req));
}

}  // namespace

int main(int argc, char **argv) {
  mptest::install(&argc, argv);
  return RUN_ALL_TESTS();
}
