// The algorithm registry's choices on made-up communicator shapes with the
// default and with fixed costs, forced algorithms and their fallback, and
// the tuning file's format.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/coll/select/cost_model.h"
#include "core/coll/select/registry.h"
#include "core/coll/select/row_terms.h"
#include "core/util/error.h"
#include "registry_shapes.h"

using namespace smd;

namespace {

CommShape single_node(int p) {
  CommShape s;
  s.size = p;
  s.max_local = s.min_local = p;
  s.arena = true;
  return s;
}

using shapes::float_call;
using shapes::node_shape;

Algo pick(CollKind kind, size_t bytes, const CommShape &s, const CostModel &m = CostModel{},
          Algo forced = Algo::kAuto) {
  AlgoChoice c = choose(float_call(kind, bytes), forced, s, m);
  EXPECT_NE(c.entry, nullptr);
  return c.entry ? c.entry->algo : Algo::kAuto;
}

const CollKind kAll[] = {CollKind::kAllreduce, CollKind::kAllgather, CollKind::kReduceScatter,
                         CollKind::kBroadcast, CollKind::kReduce,    CollKind::kAlltoall,
                         CollKind::kBarrier};
const size_t kSizes[] = {8, 1024, 65536, size_t(1) << 20, size_t(16) << 20, size_t(256) << 20};

TEST(Registry, OneNodeUsesTheArenaAtEverySize) {
  for (int p : {2, 3, 4, 8})
    for (CollKind k : kAll)
      for (size_t b : kSizes)
        EXPECT_EQ(pick(k, b, single_node(p)), Algo::kDirect)
            << coll_name(k) << " " << b << " bytes, " << p << " ranks";
}

TEST(Registry, NodesOfSeveralRanksUseTheHierarchy) {
  for (CommShape s : {node_shape(2, 2, 2), node_shape(2, 3, 2), node_shape(4, 4, 4)}) {
    for (CollKind k : {CollKind::kAllreduce, CollKind::kBarrier})
      for (size_t b : kSizes)
        EXPECT_EQ(pick(k, b, s), Algo::kHierarchical) << coll_name(k) << " " << b;
    // Large broadcasts and reduces: a pipelined chain in node-major order
    // crosses each node boundary once and overlaps its hops, which the
    // hierarchy's sequential phases do not.
    for (CollKind k : {CollKind::kBroadcast, CollKind::kReduce}) {
      EXPECT_EQ(pick(k, 8, s), Algo::kHierarchical) << coll_name(k);
      EXPECT_EQ(pick(k, 65536, s), Algo::kHierarchical) << coll_name(k);
      if (s.nodes == 2) {
        EXPECT_EQ(pick(k, size_t(256) << 20, s), Algo::kRing) << coll_name(k);
      }
    }
  }
  for (CollKind k : {CollKind::kAllgather, CollKind::kReduceScatter}) {
    EXPECT_EQ(pick(k, size_t(1) << 20, node_shape(2, 2, 2)), Algo::kHierarchical) << coll_name(k);
    // Uneven nodes or members of a node that are not consecutive: flat.
    EXPECT_NE(pick(k, size_t(1) << 20, node_shape(2, 3, 2)), Algo::kHierarchical) << coll_name(k);
    EXPECT_NE(pick(k, size_t(1) << 20, node_shape(2, 2, 2, false)), Algo::kHierarchical)
        << coll_name(k);
  }
  EXPECT_EQ(pick(CollKind::kAlltoall, 65536, node_shape(2, 2, 2)), Algo::kPairwise);
}

TEST(Registry, OneRankPerNodeIsFlatLatencyOrBandwidthOptimal) {
  CommShape s = node_shape(4, 1, 1);
  EXPECT_EQ(pick(CollKind::kAllreduce, 8, s), Algo::kRd);
  // Herring moves the ring's bytes in 2 steps of fan-in instead of 2(p-1),
  // but its incast drains slower: where bytes dominate, the ring.
  EXPECT_EQ(pick(CollKind::kAllreduce, size_t(16) << 20, s), Algo::kRing);
  EXPECT_EQ(pick(CollKind::kBroadcast, 8, s), Algo::kTree);
  EXPECT_EQ(pick(CollKind::kBarrier, 0, s), Algo::kRd);
}

TEST(Registry, FixedCostsDecide) {
  // A network with no per-message cost makes the ring best at any size; one
  // with a huge per-message cost makes recursive doubling best.
  CommShape s = node_shape(8, 1, 1);
  CostModel free_messages;
  free_messages.net = {0.0, 1.0};
  free_messages.reduce_gbps = 1e12;  // reductions cost nothing either
  EXPECT_EQ(pick(CollKind::kAllreduce, 1024, s, free_messages), Algo::kRing);
  CostModel costly_messages;
  costly_messages.net = {1e6, 1.0};
  EXPECT_EQ(pick(CollKind::kAllreduce, size_t(64) << 20, s, costly_messages), Algo::kRd);
  // The predicted cost is the table's formula: 2(p-1) ring steps of S/p.
  AlgoChoice c = choose(float_call(CollKind::kAllreduce, 8000), Algo::kRing, s, free_messages);
  EXPECT_NEAR(c.cost_us, 2 * 7 * (8000.0 / 8) / 1e3, 1e-6);
}

TEST(Registry, ForcedAlgorithmsApplyOrFallBack) {
  EXPECT_EQ(pick(CollKind::kAllreduce, 65536, single_node(4), {}, Algo::kRing), Algo::kRing);
  // Hierarchical needs several nodes; direct needs one.
  EXPECT_EQ(pick(CollKind::kAllreduce, 65536, single_node(4), {}, Algo::kHierarchical),
            Algo::kDirect);
  EXPECT_NE(pick(CollKind::kAllreduce, 65536, node_shape(2, 2, 2), {}, Algo::kDirect),
            Algo::kDirect);
  EXPECT_EQ(pick(CollKind::kAllreduce, 65536, node_shape(4, 1, 1), {}, Algo::kHierarchical),
            Algo::kHerring);
  EXPECT_TRUE(algo_supported(CollKind::kAllreduce, Algo::kHierarchical));
  EXPECT_FALSE(algo_supported(CollKind::kAlltoall, Algo::kHierarchical));
  EXPECT_FALSE(algo_supported(CollKind::kAllreduce, Algo::kTree));
}

TEST(Registry, HerringRunsBetweenNodesOnly) {
  // One member per node (a hierarchy's rail): forced, it runs.
  EXPECT_EQ(pick(CollKind::kAllreduce, 65536, node_shape(3, 1, 1), {}, Algo::kHerring),
            Algo::kHerring);
  // Several members per node: forcing it leaves the hierarchy to run it
  // between nodes; one node: the arena.
  EXPECT_EQ(pick(CollKind::kAllreduce, 65536, node_shape(2, 2, 2), {}, Algo::kHerring),
            Algo::kHierarchical);
  EXPECT_EQ(pick(CollKind::kAllreduce, 65536, single_node(4), {}, Algo::kHerring), Algo::kDirect);
  // On two nodes it is the ring's schedule (one push, one pull): the ring,
  // first of equal costs, keeps it.
  EXPECT_EQ(pick(CollKind::kAllreduce, size_t(16) << 20, node_shape(2, 1, 1)), Algo::kRing);
  // Its fan-in: 2 log2(p) latencies against the ring's 2(p-1), the same bytes.
  CostModel m;
  m.net = {10.0, 1.0};
  m.reduce_gbps = 1e12;
  AlgoChoice c =
      choose(float_call(CollKind::kAllreduce, 8000), Algo::kHerring, node_shape(8, 1, 1), m);
  EXPECT_NEAR(c.cost_us, 2 * (3 * 10.0 + (1 + 0.03 * 7) * 7 * (8000.0 / 8) / 1e3), 1e-6);
}

TEST(Registry, CmaOnlyWhereCrossMemoryWorks) {
  for (int p : {2, 4}) {
    CommShape without = single_node(p), with = single_node(p);
    with.cma = true;
    for (CollKind k : kAll)
      for (size_t b : kSizes) {
        // Unavailable (the arena's probe failed, or SMD_CMA=0): never
        // chosen, and forcing it falls back to the automatic choice.
        EXPECT_NE(pick(k, b, without), Algo::kCma) << coll_name(k) << " " << b;
        EXPECT_NE(pick(k, b, without, {}, Algo::kCma), Algo::kCma) << coll_name(k) << " " << b;
      }
    // Where cross-memory reads measure fast, one copy instead of two wins
    // once the system call is paid for; the defaults leave the arena's
    // staging in place until measured parameters say otherwise.
    CostModel fast_cma;
    fast_cma.cma = {2.0, 10.0};
    for (CollKind k : {CollKind::kAllgather, CollKind::kBroadcast}) {
      EXPECT_EQ(pick(k, 8, with, fast_cma), Algo::kDirect) << coll_name(k);
      EXPECT_EQ(pick(k, size_t(16) << 20, with, fast_cma), Algo::kCma) << coll_name(k);
      for (size_t b : kSizes)
        EXPECT_EQ(pick(k, b, with), Algo::kDirect) << coll_name(k) << " " << b;
      EXPECT_EQ(pick(k, 8, with, {}, Algo::kCma), Algo::kCma) << coll_name(k);
    }
    // reduce_scatter adds its reductions at reduce_gbps.
    EXPECT_EQ(pick(CollKind::kReduceScatter, 8, with, {}, Algo::kCma), Algo::kCma);
    for (size_t b : kSizes) EXPECT_EQ(pick(CollKind::kReduceScatter, b, with), Algo::kDirect) << b;
    // Other nodes' ranks cannot be read.
    CommShape spread = node_shape(2, p, p);
    spread.cma = true;
    EXPECT_NE(pick(CollKind::kAllgather, size_t(16) << 20, spread, {}, Algo::kCma), Algo::kCma);
  }
  // Its costs come from the tuning file's cma_ keys.
  CommShape s = single_node(2);
  s.cma = true;
  CostModel slow_cma;
  slow_cma.cma = {1e6, 1.0};
  EXPECT_EQ(pick(CollKind::kAllgather, size_t(16) << 20, s, slow_cma), Algo::kDirect);
  CostModel m;
  m.cma = {4.0, 8.0};
  AlgoChoice c = choose(float_call(CollKind::kBroadcast, 8000), Algo::kCma, s, m);
  EXPECT_NEAR(c.cost_us, 2 * m.arena.alpha_us + 4.0 + 8000 / 8e3, 1e-9);
}

// A row's cost is its own: the cost model has a formula for it (none
// throws), it is finite, and at some shape and size it differs from every
// other row of the same collective (a row that borrowed another's formula
// would tie with it everywhere).
TEST(Registry, EveryRowHasACostOfItsOwn) {
  std::vector<CommShape> shapes = {single_node(2),      single_node(3),      single_node(8),
                                   node_shape(2, 4, 4), node_shape(4, 1, 1), node_shape(3, 2, 2)};
  for (CommShape &s : shapes) s.cma = s.arena;
  CostModel m;
  auto costs_of = [&](const AlgoEntry &e) {
    std::vector<double> costs;
    for (const CommShape &s : shapes)
      for (size_t b : kSizes) {
        CollArgs a = float_call(e.kind, b);
        if (e.kind == CollKind::kAllgatherv || e.kind == CollKind::kReduceScatterv ||
            e.kind == CollKind::kAlltoallv) {
          auto l = std::make_shared<BlockLayout>();
          for (int r = 0; r < s.size; ++r) {
            l->counts.push_back(a.count + size_t(r));  // uneven, so the largest block counts
            l->displs.push_back(r == 0 ? 0 : l->displs.back() + l->counts[size_t(r) - 1]);
          }
          finish_layout(*l);
          a.blocks = l;
        }
        double c = -1;
        if (!e.cost) continue;  // RowsBringTheirOwnFormulas names it
        EXPECT_NO_THROW(c = e.cost(a, s, m)) << coll_name(e.kind) << " " << algo_name(e.algo);
        EXPECT_TRUE(std::isfinite(c) && c >= 0)
            << coll_name(e.kind) << " " << algo_name(e.algo) << ": " << c;
        costs.push_back(c);
      }
    return costs;
  };
  std::span<const AlgoEntry> rows = algo_rows();
  ASSERT_FALSE(rows.empty());
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t j = i + 1; j < rows.size(); ++j)
      if (rows[i].kind == rows[j].kind) {
        EXPECT_NE(costs_of(rows[i]), costs_of(rows[j]))
            << coll_name(rows[i].kind) << ": " << algo_name(rows[i].algo) << " and "
            << algo_name(rows[j].algo) << " predict the same everywhere";
      }
}

// Every row prices itself: it has a cost function, and a point-to-point
// row (one that applies anywhere) carries a formula that no other row
// shares, which is its cost over the communicator's links and what
// best_flat_cost compares for a hierarchical algorithm's phase between
// nodes. The v-collectives' rows price the largest block with their uniform
// collective's formula, so they carry none of their own.
TEST(Registry, RowsBringTheirOwnFormulas) {
  std::vector<LinkFormula> seen;
  for (const AlgoEntry &e : algo_rows()) {
    std::string row = std::string(coll_name(e.kind)) + " " + e.name;
    EXPECT_NE(e.cost, nullptr) << row << " has no cost";
    bool v_kind = per_rank_blocks(e.kind) || e.kind == CollKind::kAlltoallv;
    if (e.applicable == anywhere && !v_kind)
      EXPECT_NE(e.link_formula, nullptr) << row << " applies anywhere without a formula";
    if (!e.link_formula) continue;
    for (LinkFormula f : seen) EXPECT_NE(f, e.link_formula) << row << " shares a formula";
    seen.push_back(e.link_formula);
    for (const CommShape &s : {node_shape(4, 1, 1), node_shape(3, 1, 1), single_node(5)})
      for (size_t b : kSizes) {
        CostModel m;
        m.net = {7.0, 3.0};
        CollArgs a = float_call(e.kind, b);
        const LinkCost &link = s.nodes > 1 ? m.net : m.local;
        double expected = e.link_formula(s.size, double(b / 4 * 4), link, m.reduce_gbps);
        if (e.cost) EXPECT_EQ(e.cost(a, s, m), expected) << row << " " << b;
        EXPECT_EQ(flat_cost(e.kind, e.algo, s.size, double(b / 4 * 4), link, m.reduce_gbps),
                  expected)
            << row;
        EXPECT_LE(best_flat_cost(e.kind, s.size, double(b), link, m.reduce_gbps),
                  e.link_formula(s.size, double(b), link, m.reduce_gbps))
            << row;
      }
  }
  EXPECT_FALSE(seen.empty());
}

// SMD_ALGO can name and force every row.
TEST(Registry, EveryRowIsNamedAndForceable) {
  for (const AlgoEntry &e : algo_rows()) {
    std::string spec = std::string(coll_name(e.kind)) + "=" + algo_name(e.algo);
    EXPECT_EQ(AlgoConfig::parse(spec).get(e.kind), e.algo) << spec;
    EXPECT_EQ(find_algo(e.kind, e.algo), &e) << spec << " has two rows";
  }
}

// The names come from the rows: every Algo value has rows, its rows agree
// on one name, and no two algorithms share a name (nor "auto").
TEST(Registry, EveryAlgorithmHasRowsOfOneName) {
  std::vector<std::string> seen;
  for (int i = int(Algo::kAuto) + 1; i < int(Algo::kCount); ++i) {
    Algo algo = Algo(i);
    const char *name = nullptr;
    for (const AlgoEntry &e : algo_rows()) {
      if (e.algo != algo) continue;
      if (!name) name = e.name;
      EXPECT_STREQ(e.name, name) << coll_name(e.kind) << "'s row of algorithm " << i;
    }
    ASSERT_NE(name, nullptr) << "algorithm " << i << " has no row";
    EXPECT_STREQ(algo_name(algo), name);
    EXPECT_STRNE(name, "auto");
    // smd_comm_get_stats reports it in last_algorithm, with its terminator.
    EXPECT_LT(std::string(name).size(), sizeof(smd_comm_stats_t{}.last_algorithm)) << name;
    for (const std::string &other : seen) EXPECT_NE(other, name) << "two algorithms share it";
    seen.push_back(name);
    AlgoConfig forced = AlgoConfig::parse(name);  // SMD_ALGO reads the rows' names
    for (const AlgoEntry &e : algo_rows()) {
      if (e.algo != algo) continue;
      EXPECT_EQ(forced.get(e.kind), algo) << name;
    }
  }
  EXPECT_STREQ(algo_name(Algo::kAuto), "auto");
  EXPECT_THROW(AlgoConfig::parse("no-such-algorithm"), Error);
}

// A row's memory kinds decide alone whether it runs on device memory:
// device calls get, forced or not, only rows declared for any memory.
TEST(Registry, HostOnlyRowsAreNotChosenForDeviceMemory) {
  bool some_host_only = false;
  for (const AlgoEntry &e : algo_rows()) {
    some_host_only |= !applies_to(e, MemoryKind::kDevice);
    EXPECT_TRUE(applies_to(e, MemoryKind::kHost)) << coll_name(e.kind) << " " << e.name;
    // The self-checked rows are the arena's, which moves host memory only.
    EXPECT_TRUE(!e.self_checked || !applies_to(e, MemoryKind::kDevice)) << coll_name(e.kind);
  }
  EXPECT_TRUE(some_host_only);
  CommShape one_node = single_node(4);
  one_node.cma = true;
  for (int kind = 0; kind < int(CollKind::kCount); ++kind)
    for (size_t b : kSizes) {
      CollKind k = CollKind(kind);
      CollArgs a = float_call(k, b);
      a.memory = MemoryKind::kDevice;
      for (const AlgoEntry &e : algo_rows()) {
        if (e.kind != k) continue;
        AlgoChoice c = choose(a, e.algo, one_node, CostModel{});
        ASSERT_NE(c.entry, nullptr) << coll_name(k);
        EXPECT_TRUE(applies_to(*c.entry, MemoryKind::kDevice))
            << coll_name(k) << " " << b << " forced " << e.name << ": " << c.entry->name;
        if (!applies_to(e, MemoryKind::kDevice)) {
          // The same call on host memory does take it: only the memory kind stops it.
          a.memory = MemoryKind::kHost;
          EXPECT_EQ(choose(a, e.algo, one_node, CostModel{}).entry, &e)
              << coll_name(k) << " " << e.name;
          a.memory = MemoryKind::kDevice;
        }
      }
    }
}

TEST(CostModel, AnAlgorithmWithoutAFormulaIsAnError) {
  EXPECT_THROW(flat_cost(CollKind::kAllreduce, Algo::kTree, 4, 1024, LinkCost{}, 1), Error);
  EXPECT_THROW(flat_cost(CollKind::kAlltoall, Algo::kRing, 4, 1024, LinkCost{}, 1), Error);
  EXPECT_THROW(flat_cost(CollKind::kAllreduce, Algo::kTree, 1, 1024, LinkCost{}, 1), Error);
  EXPECT_THROW(flat_cost(CollKind::kAllreduce, Algo::kDirect, 4, 1024, LinkCost{}, 1), Error);
  EXPECT_EQ(flat_cost(CollKind::kAllreduce, Algo::kRd, 1, 1024, LinkCost{}, 1), 0);  // one rank
}

TEST(CostModel, TuningFileRoundTripsAndRejectsNonsense) {
  CostModel m;
  m.net = {12.5, 3.0};
  m.arena = {0.25, 20.0};
  m.cma = {1.5, 7.0};
  CostModel back = CostModel::parse(m.to_text(), "test");
  EXPECT_DOUBLE_EQ(back.cma.alpha_us, 1.5);
  EXPECT_DOUBLE_EQ(back.cma.gbps, 7.0);
  EXPECT_DOUBLE_EQ(back.net.alpha_us, 12.5);
  EXPECT_DOUBLE_EQ(back.arena.gbps, 20.0);
  EXPECT_DOUBLE_EQ(back.local.gbps, CostModel{}.local.gbps);
  CostModel partial = CostModel::parse("# measured\n\nnet_gbps = 2.5  # 20 Gb/s\n", "test");
  EXPECT_DOUBLE_EQ(partial.net.gbps, 2.5);
  EXPECT_DOUBLE_EQ(partial.net.alpha_us, CostModel{}.net.alpha_us);
  for (const char *bad : {"net_gbps 2", "warp = 1", "net_gbps = 0", "net_gbps = -1",
                          "net_alpha_us = x", "net_alpha_us = 1e400", "cma_gbps = 0"}) {
    try {
      CostModel::parse(std::string("arena_gbps = 9\n") + bad + "\n", "file.txt");
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const Error &e) {
      EXPECT_EQ(e.code(), SMD_ERR_INVALID_ARGUMENT) << bad;
      EXPECT_NE(e.message().find("file.txt line 2"), std::string::npos) << e.message();
    }
  }
}

}  // namespace
