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
  int nodes = 1, local_size = 1, max_local = 1;
  bool uniform = true;
};

Layout layout_of(smd_comm_t *c) {
  Layout l;
  EXPECT_EQ(smd_comm_node_count(c, &l.nodes), SMD_SUCCESS);
  EXPECT_EQ(smd_comm_local_size(c, &l.local_size), SMD_SUCCESS);
  int lo = 0;
  EXPECT_EQ(smd_allreduce(&l.local_size, &lo, 1, SMD_INT32, SMD_MIN, c, nullptr), SMD_SUCCESS);
  EXPECT_EQ(smd_allreduce(&l.local_size, &l.max_local, 1, SMD_INT32, SMD_MAX, c, nullptr),
            SMD_SUCCESS);
  l.uniform = lo == l.max_local;
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

// What one call sent across nodes (the most of any rank), against the
// least its algorithm needs. Where the hierarchy applies it must be
// chosen and stay within `hier_bound`; a forced flat algorithm must
// exceed that bound (or the hierarchy saves nothing). Where it does not
// apply (one member per node: the flat algorithms are the hierarchy;
// allgather and reduce_scatter on nodes of different sizes), a flat
// algorithm must be chosen and stay within `flat_bound`.
void expect_cross_node_bytes(bool hier_applies, const std::string &algo, uint64_t sent,
                             double hier_bound, double flat_bound) {
  SCOPED_TRACE("algorithm " + algo + ", " + std::to_string(sent) + " B across nodes");
  if (forced_flat()) {
    EXPECT_NE(algo, "hierarchical");
    if (hier_applies) {
      EXPECT_GT(double(sent), hier_bound)
          << "a flat algorithm should send more across nodes than the hierarchy";
    }
    return;
  }
  if (hier_applies) {
    EXPECT_EQ(algo, "hierarchical");
    EXPECT_LE(double(sent), hier_bound);
  } else {
    EXPECT_NE(algo, "hierarchical");
    EXPECT_LE(double(sent), flat_bound);
  }
}

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

// Uniform nodes of L members: each rank's rail allreduces 1/L of the
// vector, 2(n-1)/n of S/L across nodes. Nodes of different sizes: the
// leaders' way, the node leaders allreduce all of S (2(n-1)/n of S). One
// member per node: a bandwidth-optimal flat allreduce, 2(p-1)/p of S.
TEST(Hierarchy, AllreduceSendsTheMinimumAcrossNodes) {
  Layout l = layout_of(world());
  ASSERT_GE(l.nodes, 2) << "run under smdrun --nodes with at least 2 nodes";
  const size_t count = size_t(1) << 20;  // 4 MiB of float32
  std::vector<float> in(count, float(rank() + 1)), out(count, -1);
  std::string algo;
  uint64_t sent = max_inter_node_sent(
      world(),
      [&] {
        ASSERT_EQ(
            smd_allreduce(in.data(), out.data(), count, SMD_FLOAT32, SMD_SUM, world(), nullptr),
            SMD_SUCCESS)
            << smd_last_error();
      },
      &algo);
  float want = float(size()) * float(size() + 1) / 2;
  for (size_t i = 0; i < count; i += 4099) ASSERT_EQ(out[i], want) << "element " << i;
  double n = l.nodes, p = size(), bytes = double(count) * sizeof(float);
  double per_rank = l.uniform ? bytes / l.local_size : bytes;
  expect_cross_node_bytes(l.max_local > 1, algo, sent, 2 * (n - 1) / n * per_rank + kHeaderSlack,
                          2 * (p - 1) / p * bytes + kHeaderSlack);
}

// Uniform nodes: each rank sends its block to its rail peer on every
// other node, (n-1) blocks. Otherwise the flat ring: (p-1) blocks.
TEST(Hierarchy, AllgatherSendsTheMinimumAcrossNodes) {
  Layout l = layout_of(world());
  ASSERT_GE(l.nodes, 2) << "run under smdrun --nodes with at least 2 nodes";
  const size_t count = size_t(1) << 18;  // 1 MiB per rank
  std::vector<int32_t> in(count, rank()), out(count * size_t(size()), -1);
  std::string algo;
  uint64_t sent = max_inter_node_sent(
      world(),
      [&] {
        ASSERT_EQ(smd_allgather(in.data(), out.data(), count, SMD_INT32, world(), nullptr),
                  SMD_SUCCESS)
            << smd_last_error();
      },
      &algo);
  for (int r = 0; r < size(); ++r) ASSERT_EQ(out[size_t(r) * count + count / 2], r);
  double block = double(count) * 4;
  expect_cross_node_bytes(l.uniform && l.local_size > 1, algo, sent,
                          (l.nodes - 1) * block + kHeaderSlack,
                          (size() - 1) * block + kHeaderSlack);
}

// The mirror of allgather: uniform nodes reduce-scatter n partial blocks
// along the rail, (n-1) blocks across nodes; otherwise the flat ring,
// (p-1) blocks.
TEST(Hierarchy, ReduceScatterSendsTheMinimumAcrossNodes) {
  Layout l = layout_of(world());
  ASSERT_GE(l.nodes, 2) << "run under smdrun --nodes with at least 2 nodes";
  const size_t count = size_t(1) << 18;  // 1 MiB per rank
  std::vector<int32_t> in(count * size_t(size())), out(count, -1);
  for (size_t i = 0; i < in.size(); ++i) in[i] = int32_t(i / count) + rank();
  std::string algo;
  uint64_t sent = max_inter_node_sent(
      world(),
      [&] {
        ASSERT_EQ(
            smd_reduce_scatter(in.data(), out.data(), count, SMD_INT32, SMD_SUM, world(), nullptr),
            SMD_SUCCESS)
            << smd_last_error();
      },
      &algo);
  int32_t want = size() * rank() + size() * (size() - 1) / 2;
  for (size_t i = 0; i < count; i += 4099) ASSERT_EQ(out[i], want) << "element " << i;
  double block = double(count) * 4;
  expect_cross_node_bytes(l.uniform && l.local_size > 1, algo, sent,
                          (l.nodes - 1) * block + kHeaderSlack,
                          (size() - 1) * block + kHeaderSlack);
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
    ASSERT_EQ(smd_allreduce(in.data(), sum.data(), count, SMD_FLOAT64, SMD_SUM, rev, nullptr),
              SMD_SUCCESS);
    for (size_t i = 0; i < count; i += 7)
      ASSERT_EQ(sum[i], 1000.0 * p * (p - 1) / 2 + double(p) * double(i % 97));
    std::vector<double> all(count * size_t(p));
    ASSERT_EQ(smd_allgather(in.data(), all.data(), count, SMD_FLOAT64, rev, nullptr), SMD_SUCCESS);
    for (int q = 0; q < p; ++q) ASSERT_EQ(all[size_t(q) * count], double(q * 1000));
    std::vector<double> blocks(count * size_t(p)), mine(count);
    for (size_t i = 0; i < blocks.size(); ++i) blocks[i] = double(r + int(i / count));
    ASSERT_EQ(
        smd_reduce_scatter(blocks.data(), mine.data(), count, SMD_FLOAT64, SMD_SUM, rev, nullptr),
        SMD_SUCCESS);
    ASSERT_EQ(mine[0], double(p) * (p - 1) / 2 + double(p) * r);
    std::vector<double> b(count, r == p - 1 ? 42.0 : 0.0);
    ASSERT_EQ(smd_broadcast(b.data(), b.data(), count, SMD_FLOAT64, p - 1, rev, nullptr),
              SMD_SUCCESS);
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
    ASSERT_EQ(smd_broadcast(b.data(), b.data(), count, SMD_INT64, root, world(), nullptr),
              SMD_SUCCESS);
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
