// Hierarchical collectives on communicators that span (fake) nodes: the
// automatic choice, the bytes that cross nodes (read back through
// smd_comm_get_stats), and results on layouts the hierarchy must handle
// or refuse cleanly (members of a node not consecutive). Run under
// `smdrun --nodes` with several ranks per node; SMD_ALGO=ring in one of
// its runs checks that the flat ring sends more across nodes.
#include <gtest/gtest.h>
#include <smd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mp_env.h"

using mptest::rank;
using mptest::size;
using mptest::world;

namespace {

struct Layout {
  int nodes = 1, local_size = 1;
  bool uniform = true;
};

Layout layout_of(smd_comm_t *c) {
  Layout l;
  EXPECT_EQ(smd_comm_node_count(c, &l.nodes), SMD_SUCCESS);
  EXPECT_EQ(smd_comm_local_size(c, &l.local_size), SMD_SUCCESS);
  int lo = 0, hi = 0;
  EXPECT_EQ(smd_allreduce(&l.local_size, &lo, 1, SMD_INT32, SMD_MIN, c, nullptr), SMD_SUCCESS);
  EXPECT_EQ(smd_allreduce(&l.local_size, &hi, 1, SMD_INT32, SMD_MAX, c, nullptr), SMD_SUCCESS);
  l.uniform = lo == hi;
  return l;
}

smd_comm_stats_t stats_of(smd_comm_t *c) {
  smd_comm_stats_t s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  EXPECT_EQ(smd_comm_get_stats(c, &s), SMD_SUCCESS) << smd_last_error();
  return s;
}

// The most any rank sent across nodes during one call of fn.
template <typename Fn>
uint64_t max_inter_node_sent(smd_comm_t *c, Fn fn, std::string *algo) {
  uint64_t before = stats_of(c).inter_node_bytes_sent;
  fn();
  smd_comm_stats_t after = stats_of(c);
  *algo = after.last_algorithm;
  uint64_t mine = after.inter_node_bytes_sent - before, most = 0;
  EXPECT_EQ(smd_allreduce(&mine, &most, 1, SMD_UINT64, SMD_MAX, c, nullptr), SMD_SUCCESS);
  return most;
}

bool forced_flat() {
  const char *a = getenv("SMD_ALGO");
  return a && *a && std::string(a) != "auto" && std::string(a) != "hierarchical";
}

// Slack for message headers and the small operations of a phase.
constexpr double kHeaderSlack = 4096;

TEST(Hierarchy, StatsValidateTheirArgument) {
  EXPECT_EQ(smd_comm_get_stats(world(), nullptr), SMD_ERR_INVALID_ARGUMENT);
  smd_comm_stats_t s;
  s.struct_size = 0;
  EXPECT_EQ(smd_comm_get_stats(world(), &s), SMD_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(smd_last_error()).find("struct_size"), std::string::npos);
  // An older caller's shorter struct gets the fields it knows.
  struct {
    size_t struct_size;
    uint64_t collectives;
  } old{sizeof old, 0};
  ASSERT_EQ(smd_comm_get_stats(world(), reinterpret_cast<smd_comm_stats_t *>(&old)), SMD_SUCCESS);
  EXPECT_GT(old.collectives, 0u);
  EXPECT_EQ(old.struct_size, sizeof old);
  smd_comm_stats_t full = stats_of(world());
  EXPECT_GE(full.transport_count, size() > 1 ? 1 : 0);
}

TEST(Hierarchy, AllreduceSendsTheMinimumAcrossNodes) {
  Layout l = layout_of(world());
  if (l.nodes < 2 || !l.uniform) GTEST_SKIP() << "needs >= 2 nodes with as many ranks each";
  const size_t count = size_t(1) << 20;  // 4 MiB of float32
  std::vector<float> in(count, float(rank() + 1)), out(count, -1);
  std::string algo;
  uint64_t sent = max_inter_node_sent(
      world(),
      [&] {
        ASSERT_EQ(smd_allreduce(in.data(), out.data(), count, SMD_FLOAT32, SMD_SUM, world(), nullptr),
                  SMD_SUCCESS)
            << smd_last_error();
      },
      &algo);
  float want = float(size()) * float(size() + 1) / 2;
  for (size_t i = 0; i < count; i += 4099) ASSERT_EQ(out[i], want) << "element " << i;
  double n = l.nodes, bytes = double(count) * sizeof(float);
  double bound = 2 * (n - 1) / n * bytes / l.local_size + kHeaderSlack;
  if (forced_flat()) {
    EXPECT_NE(algo, "hierarchical");
    EXPECT_GT(double(sent), bound) << "a flat algorithm (" << algo
                                   << ") should send more across nodes than the hierarchy";
  } else {
    EXPECT_EQ(algo, l.local_size > 1 ? "hierarchical" : algo);
    if (l.local_size > 1) {
      EXPECT_LE(double(sent), bound) << algo;
    }
  }
}

TEST(Hierarchy, AllgatherSendsTheMinimumAcrossNodes) {
  Layout l = layout_of(world());
  if (l.nodes < 2 || !l.uniform || l.local_size < 2 || forced_flat())
    GTEST_SKIP() << "needs >= 2 nodes with as many ranks each (>1) and no forced algorithm";
  const size_t count = size_t(1) << 18;  // 1 MiB per rank
  std::vector<int32_t> in(count, rank()), out(count * size_t(size()), -1);
  std::string algo;
  uint64_t sent = max_inter_node_sent(
      world(),
      [&] {
        ASSERT_EQ(smd_allgather(in.data(), out.data(), count, SMD_INT32, world(), nullptr), SMD_SUCCESS)
            << smd_last_error();
      },
      &algo);
  for (int r = 0; r < size(); ++r) ASSERT_EQ(out[size_t(r) * count + count / 2], r);
  EXPECT_EQ(algo, "hierarchical");
  // Each rank sends its block to its rail peer on every other node.
  EXPECT_LE(double(sent), (l.nodes - 1) * double(count) * 4 * 1.0 + kHeaderSlack);
}

// Ranks in reverse order: each node's members are no longer consecutive
// ranks, so allgather and reduce_scatter fall back to flat algorithms,
// while the others stay hierarchical; results must be right either way.
TEST(Hierarchy, ReversedRanksStillGiveRightResults) {
  smd_comm_t *rev = nullptr;
  ASSERT_EQ(smd_comm_split(world(), 0, size() - rank(), &rev), SMD_SUCCESS) << smd_last_error();
  int r = 0, p = 0;
  smd_comm_rank(rev, &r);
  smd_comm_size(rev, &p);
  ASSERT_EQ(r, size() - 1 - rank());
  for (size_t count : {size_t(1), size_t(13), size_t(70001)}) {
    SCOPED_TRACE(count);
    std::vector<double> in(count), sum(count);
    for (size_t i = 0; i < count; ++i) in[i] = double(r * 1000 + int(i % 97));
    ASSERT_EQ(smd_allreduce(in.data(), sum.data(), count, SMD_FLOAT64, SMD_SUM, rev, nullptr), SMD_SUCCESS);
    for (size_t i = 0; i < count; i += 7)
      ASSERT_EQ(sum[i], 1000.0 * p * (p - 1) / 2 + double(p) * double(i % 97));
    std::vector<double> all(count * size_t(p));
    ASSERT_EQ(smd_allgather(in.data(), all.data(), count, SMD_FLOAT64, rev, nullptr), SMD_SUCCESS);
    for (int q = 0; q < p; ++q) ASSERT_EQ(all[size_t(q) * count], double(q * 1000));
    std::vector<double> blocks(count * size_t(p)), mine(count);
    for (size_t i = 0; i < blocks.size(); ++i) blocks[i] = double(r + int(i / count));
    ASSERT_EQ(smd_reduce_scatter(blocks.data(), mine.data(), count, SMD_FLOAT64, SMD_SUM, rev, nullptr),
              SMD_SUCCESS);
    ASSERT_EQ(mine[0], double(p) * (p - 1) / 2 + double(p) * r);
    std::vector<double> b(count, r == p - 1 ? 42.0 : 0.0);
    ASSERT_EQ(smd_broadcast(b.data(), b.data(), count, SMD_FLOAT64, p - 1, rev, nullptr), SMD_SUCCESS);
    ASSERT_EQ(b[count - 1], 42.0);
    std::vector<double> red(count, -1);
    ASSERT_EQ(smd_reduce(in.data(), red.data(), count, SMD_FLOAT64, SMD_MAX, 1 % p, rev, nullptr),
              SMD_SUCCESS);
    if (r == 1 % p) {
      ASSERT_EQ(red[0], double((p - 1) * 1000));
    }
  }
  ASSERT_EQ(smd_comm_destroy(rev), SMD_SUCCESS);
}

// Every rank as root of a broadcast and a reduce, including roots that
// are not the first member of their node (the reduce then hands the
// result from the node's leader to the root).
TEST(Hierarchy, EveryRootInEveryPlace) {
  const size_t count = 3001;
  for (int root = 0; root < size(); ++root) {
    SCOPED_TRACE(root);
    std::vector<int64_t> b(count, rank() == root ? root + 7 : -1);
    ASSERT_EQ(smd_broadcast(b.data(), b.data(), count, SMD_INT64, root, world(), nullptr), SMD_SUCCESS);
    ASSERT_EQ(b[count / 2], root + 7);
    std::vector<int64_t> in(count, rank() + 1), out(count, -5);
    ASSERT_EQ(smd_reduce(in.data(), out.data(), count, SMD_INT64, SMD_SUM, root, world(), nullptr),
              SMD_SUCCESS);
    if (rank() == root) {
      ASSERT_EQ(out[count - 1], int64_t(size()) * (size() + 1) / 2);
    }
    std::vector<float> avg(count, float(rank())), got(count);
    ASSERT_EQ(smd_allreduce(avg.data(), got.data(), count, SMD_FLOAT32, SMD_AVG, world(), nullptr),
              SMD_SUCCESS);
    ASSERT_FLOAT_EQ(got[0], float(size() - 1) / 2);
  }
}

}  // namespace

int main(int argc, char **argv) {
  mptest::install(&argc, argv);
  return RUN_ALL_TESTS();
}
