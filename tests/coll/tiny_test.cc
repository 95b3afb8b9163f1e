// The tiny path (src/core/coll/algorithms/tiny.cc): broadcasts, allreduces,
// allgathers and reduce_scatters whose part per rank (a reduce_scatter's
// whole input) fits one descriptor line, at the sizes
// around its limit, for every datatype and op; long alternating sequences
// (the lines are reused every 64 rounds while broadcast roots run ahead);
// tiny calls mixed with large ones; and arguments that differ between
// ranks at tiny sizes, which must still fail everywhere.
#include <gtest/gtest.h>
#include <smd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "../../tools/common/values.h"
#include "mismatch_case.h"
#include "mp_env.h"

using namespace smdvals;
using mptest::rank;
using mptest::size;
using mptest::world;

namespace {

// The payload of one line (OpDesc::kInlineBytes); one element more is not tiny.
constexpr size_t kLineBytes = 32;

std::vector<size_t> counts_around_limit(smd_datatype_t d) {
  size_t most = kLineBytes / dtype_size(d);
  return {0, 1, 3, most - 1, most, most + 1};
}

TEST(Tiny, AllreduceEveryTypeOpAndSize) {
  for (smd_datatype_t d : kAllDatatypes)
    for (smd_op_t op : kAllOps)
      for (size_t n : counts_around_limit(d))
        for (bool in_place : {false, true}) {
          std::vector<uint8_t> in(64, 0xA5), out(64, 0xA5);
          for (size_t i = 0; i < n; ++i) store(in.data(), i, d, value(rank(), i, op, d));
          void *recv = in_place ? in.data() : out.data();
          SMD_OK(smd_allreduce(in.data(), recv, n, d, op, world(), nullptr));
          for (size_t i = 0; i < n; ++i) {
            double want = expected(size(), i, op, d), got = load(recv, i, d);
            ASSERT_TRUE(close_enough(got, want, d, op))
                << "type " << d << " op " << op << " n " << n << " in_place " << in_place << " i "
                << i << ": " << got << " want " << want;
          }
          // Nothing past the vector was written.
          ASSERT_EQ(static_cast<uint8_t *>(recv)[n * dtype_size(d)], 0xA5);
        }
}

TEST(Tiny, BroadcastEveryTypeSizeAndRoot) {
  for (smd_datatype_t d : kAllDatatypes)
    for (size_t n : counts_around_limit(d))
      for (int root = 0; root < size(); ++root)
        for (bool in_place : {false, true}) {
          std::vector<uint8_t> in(64, 0xA5), out(64, 0x5A);
          for (size_t i = 0; i < n; ++i) store(in.data(), i, d, value(root, i, SMD_SUM, d));
          void *recv = rank() == root && in_place ? in.data() : out.data();
          SMD_OK(smd_broadcast(in.data(), recv, n, d, root, world(), nullptr));
          for (size_t i = 0; i < n; ++i)
            ASSERT_EQ(load(recv, i, d), load_value(root, i, SMD_SUM, d))
                << "type " << d << " n " << n << " root " << root << " i " << i;
        }
}

TEST(Tiny, AllgatherEveryTypeAndSize) {
  for (smd_datatype_t d : kAllDatatypes)
    for (size_t n : counts_around_limit(d))
      for (bool in_place : {false, true}) {
        size_t es = dtype_size(d);
        std::vector<uint8_t> in(64, 0xA5), out((n + 1) * es * size() + 8, 0x5A);
        uint8_t *send = in_place ? out.data() + rank() * n * es : in.data();
        for (size_t i = 0; i < n; ++i) store(send, i, d, value(rank(), i, SMD_SUM, d));
        SMD_OK(smd_allgather(send, out.data(), n, d, world(), nullptr));
        for (int j = 0; j < size(); ++j)
          for (size_t i = 0; i < n; ++i)
            ASSERT_EQ(load(out.data(), j * n + i, d), load_value(j, i, SMD_SUM, d))
                << "type " << d << " n " << n << " block " << j << " i " << i;
        ASSERT_EQ(out[n * es * size()], 0x5A) << "written past the blocks";
      }
}

// A reduce_scatter's whole input (size() blocks) is what must fit the line.
TEST(Tiny, ReduceScatterEveryTypeOpAndSize) {
  const int p = size();
  for (smd_datatype_t d : kAllDatatypes)
    for (smd_op_t op : kAllOps) {
      size_t es = dtype_size(d), most = kLineBytes / (es * p);
      std::vector<size_t> counts = {0, 1, most + 1};
      if (most > 1) counts.push_back(most - 1);
      if (most > 0) counts.push_back(most);
      for (size_t n : counts)
        for (bool in_place : {false, true}) {
          std::vector<uint8_t> in(n * es * p + 64, 0xA5), out(n * es + 64, 0xA5);
          // Element i of block b holds element b*n+i of the rank's vector.
          for (size_t i = 0; i < n * p; ++i) store(in.data(), i, d, value(rank(), i, op, d));
          uint8_t *recv = in_place ? in.data() + rank() * n * es : out.data();
          SMD_OK(smd_reduce_scatter(in.data(), recv, n, d, op, world(), nullptr));
          for (size_t i = 0; i < n; ++i) {
            double want = expected(p, rank() * n + i, op, d), got = load(recv, i, d);
            ASSERT_TRUE(close_enough(got, want, d, op))
                << "type " << d << " op " << op << " n " << n << " in_place " << in_place << " i "
                << i << ": " << got << " want " << want;
          }
          if (!in_place) {
            ASSERT_EQ(out[n * es], 0xA5) << "written past the block";
          }
        }
    }
}

// 10^4 calls alternating the four collectives, the broadcast's root
// rotating (roots run up to 64 rounds ahead of their receivers): every
// result is checked, so a line rewritten before a reader consumed it, or
// read before it was written, shows.
TEST(Tiny, TenThousandAlternatingCalls) {
  const int p = size();
  for (int it = 0; it < 10000; ++it) {
    int64_t mine[4], got[4 * 8] = {};
    for (int i = 0; i < 4; ++i) mine[i] = int64_t(it) * 1000 + rank() * 10 + i;
    switch (it % 4) {
      case 3: {
        int64_t blocks[16] = {};
        const int n = 4 / p > 0 ? 4 / p : 1;  // the whole input fits the line
        for (int i = 0; i < n * p; ++i) blocks[i] = int64_t(it) + rank() * 100 + i;
        SMD_OK(smd_reduce_scatter(blocks, got, size_t(n), SMD_INT64, SMD_SUM, world(), nullptr));
        for (int i = 0; i < n; ++i)
          ASSERT_EQ(got[i],
                    int64_t(it) * p + 100 * int64_t(p) * (p - 1) / 2 + int64_t(rank() * n + i) * p)
              << "call " << it;
        break;
      }
      case 0: {
        SMD_OK(smd_allreduce(mine, got, 4, SMD_INT64, SMD_SUM, world(), nullptr));
        for (int i = 0; i < 4; ++i)
          ASSERT_EQ(got[i], int64_t(it) * 1000 * p + 10 * int64_t(p) * (p - 1) / 2 + int64_t(i) * p)
              << "call " << it;
        break;
      }
      case 1: {
        int root = (it / 4) % p;
        int64_t *buf = rank() == root ? mine : got;
        SMD_OK(smd_broadcast(buf, buf, 4, SMD_INT64, root, world(), nullptr));
        for (int i = 0; i < 4; ++i)
          ASSERT_EQ(buf[i], int64_t(it) * 1000 + root * 10 + i) << "call " << it;
        break;
      }
      default: {
        SMD_OK(smd_allgather(mine, got, 2, SMD_INT64, world(), nullptr));
        for (int j = 0; j < p; ++j)
          for (int i = 0; i < 2; ++i)
            ASSERT_EQ(got[j * 2 + i], int64_t(it) * 1000 + j * 10 + i)
                << "call " << it << " block " << j;
      }
    }
  }
}

// Tiny calls between large ones (which take the descriptor slots and
// counters the same rounds go through), with broadcasts from every root.
TEST(Tiny, MixedWithLargeCalls) {
  const int p = size();
  const size_t big = 300000;  // floats: several rounds of staging
  std::vector<float> in(big), out(big);
  for (int it = 0; it < 40; ++it) {
    int root = it % p;
    if (it % 4 == 0) {
      for (size_t i = 0; i < big; i += 997) in[i] = float(rank() + it);
      SMD_OK(smd_allreduce(in.data(), out.data(), big, SMD_FLOAT32, SMD_SUM, world(), nullptr));
      ASSERT_EQ(out[997], float(p * it + p * (p - 1) / 2)) << "call " << it;
    } else if (it % 4 == 2) {
      for (size_t i = 0; i < big; i += 997) in[i] = float(root * 7 + it);
      SMD_OK(smd_broadcast(in.data(), out.data(), big, SMD_FLOAT32, root, world(), nullptr));
      ASSERT_EQ(out[997 * 3], float(root * 7 + it)) << "call " << it;
    }
    for (int k = 0; k < 70; ++k) {  // more than the 64 slots in flight
      int32_t x = rank() + k + it, sum = 0, b = rank() == root ? k * it : -1;
      SMD_OK(smd_allreduce(&x, &sum, 1, SMD_INT32, SMD_SUM, world(), nullptr));
      ASSERT_EQ(sum, p * (k + it) + p * (p - 1) / 2) << "call " << it << "." << k;
      SMD_OK(smd_broadcast(&b, &b, 1, SMD_INT32, root, world(), nullptr));
      ASSERT_EQ(b, k * it) << "call " << it << "." << k;
    }
  }
}

// Arguments that differ between ranks at tiny sizes: both tiny, one tiny
// and one not (a line's payload against staging), and another collective.
// Every rank ends with SMD_ERR_MISMATCH (a broadcast root that returned
// before anyone could tell it learns at its next call).
TEST(Tiny, MismatchFailsEverywhere) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  struct Case {
    const char *what;
    int which;
  } cases[] = {{"count 4 vs 8", 0},           {"count 8 vs 9 (not tiny)", 1},
               {"allgather vs allreduce", 2}, {"broadcast count 2 vs 3", 3},
               {"float32 vs int32", 4},       {"reduce_scatter vs allgather", 5},
               {"broadcast root 0 vs 1", 6}};
  for (auto &k : cases) {
    float in[64] = {1}, out[64 * 8];
    auto agreeing = [&](smd_comm_t *c) {
      return smd_allreduce(in, out, 2, SMD_FLOAT32, SMD_SUM, c, nullptr);
    };
    bool odd = rank() % 2;
    auto mismatched = [&](smd_comm_t *c) {
      switch (k.which) {
        case 0: return smd_allreduce(in, out, odd ? 4 : 8, SMD_FLOAT32, SMD_SUM, c, nullptr);
        case 1: return smd_allreduce(in, out, odd ? 8 : 9, SMD_FLOAT32, SMD_SUM, c, nullptr);
        case 2:
          return odd ? smd_allgather(in, out, 2, SMD_FLOAT32, c, nullptr)
                     : smd_allreduce(in, out, 2, SMD_FLOAT32, SMD_SUM, c, nullptr);
        case 3: return smd_broadcast(in, out, odd ? 2 : 3, SMD_FLOAT32, 0, c, nullptr);
        // Two ranks that each think they are the root: neither waits for
        // anyone, so only the roots' later check of the lines can tell.
        case 6: return smd_broadcast(in, out, 2, SMD_FLOAT32, odd ? 1 : 0, c, nullptr);
        case 5:
          return odd ? smd_reduce_scatter(in, out, 1, SMD_FLOAT32, SMD_SUM, c, nullptr)
                     : smd_allgather(in, out, 1, SMD_FLOAT32, c, nullptr);
        default:
          return smd_allreduce(in, out, 2, odd ? SMD_INT32 : SMD_FLOAT32, SMD_SUM, c, nullptr);
      }
    };
    ASSERT_NO_FATAL_FAILURE(
        mptest::expect_mismatch(k.what, 5, agreeing, mismatched, k.which == 3 || k.which == 6));
  }
}

}  // namespace

int main(int argc, char **argv) {
  mptest::install(&argc, argv);
  return RUN_ALL_TESTS();
}
