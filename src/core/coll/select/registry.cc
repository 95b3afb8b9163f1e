#include "core/coll/select/registry.h"

#include <atomic>
#include <cmath>
#include <mutex>
#include <set>
#include <tuple>

#include "core/coll/algorithms/algorithms.h"
#include "core/coll/create/hierarchy.h"
#include "core/comm/communicator.h"
#include "core/util/dtype.h"
#include "core/util/log.h"

namespace smd {

namespace {

// Bytes the flat cost formulas take: the vector, or one rank's block.
double cost_bytes(const CollArgs &a) { return double(a.count) * double(datatype_size(a.datatype)); }

// Point-to-point algorithms run on any communicator; their links are the
// network as soon as one member is on another node.
bool anywhere(const CollArgs &, const CommShape &, std::string *) { return true; }
const LinkCost &p2p_link(const CommShape &s, const CostModel &m) {
  return s.nodes > 1 ? m.net : m.local;
}
template <Algo A>
double flat(const CollArgs &a, const CommShape &s, const CostModel &m) {
  return flat_cost(a.kind, A, s.size, cost_bytes(a), p2p_link(s, m), m.reduce_gbps);
}

// Direct algorithms need the arena: every member on one node.
bool on_arena(const CollArgs &a, const CommShape &s, std::string *why) {
  if (a.memory != MemoryKind::kHost) {
    *why = "the arena moves host memory only";
    return false;
  }
  if (!s.arena) *why = "needs every member on one node with a shared-memory arena";
  return s.arena;
}
double direct_cost(const CollArgs &a, const CommShape &s, const CostModel &m) {
  // Two synchronised steps; each member stages its part and reads its
  // peers' parts where they lie: about twice the vector through memory
  // (allreduce a half more: its reduced slices are read back).
  double bytes = a.kind == CollKind::kBarrier ? 0 : cost_bytes(a);
  if (a.kind == CollKind::kAllgather || a.kind == CollKind::kReduceScatter ||
      a.kind == CollKind::kAlltoall)
    bytes *= s.size;
  double touched = (a.kind == CollKind::kAllreduce ? 2.5 : 2.0) * bytes;
  return 2 * m.arena.alpha_us + touched / (m.arena.gbps * 1e3);
}

// The cma algorithms: the arena's round protocol (two synchronised steps:
// post, then wait for every reader) around cross-memory reads, of every
// peer's block (allgather), of every peer's part of this member's block,
// which it then reduces (reduce_scatter), or of the root's vector
// (broadcast).
bool cma_applies(const CollArgs &a, const CommShape &s, std::string *why) {
  if (!on_arena(a, s, why)) return false;
  if (!s.cma)
    *why = "cross-memory attach is unavailable between the members; the communicator's "
           "creation logged why at info level";
  return s.cma;
}
double cma_cost(const CollArgs &a, const CommShape &s, const CostModel &m) {
  double bytes = cost_bytes(a);
  if (a.kind == CollKind::kBroadcast) return 2 * m.arena.alpha_us + m.cma.time_us(bytes);
  double reduced = a.kind == CollKind::kReduceScatter ? bytes / (m.reduce_gbps * 1e3) : 0;
  return 2 * m.arena.alpha_us + (s.size - 1) * (m.cma.time_us(bytes) + reduced);
}

// v-collectives: the flat formulas of allgather / reduce_scatter with the
// largest block standing for every block (the ring's steps wait for it);
// the arena touches every block twice; the hierarchy needs as many members
// on every node (blocks go to ranks by their local index).
CollKind uniform_kind(CollKind k) {
  return k == CollKind::kAllgatherv ? CollKind::kAllgather : CollKind::kReduceScatter;
}
double v_largest_bytes(const CollArgs &a) {
  return a.blocks ? double(a.blocks->largest) * double(datatype_size(a.datatype)) : 0;
}
double v_ring_cost(const CollArgs &a, const CommShape &s, const CostModel &m) {
  return flat_cost(uniform_kind(a.kind), Algo::kRing, s.size, v_largest_bytes(a), p2p_link(s, m),
                   m.reduce_gbps);
}
bool v_hierarchical_applies(const CollArgs &a, const CommShape &s, std::string *why) {
  if (!hierarchical_applies(a, s, why)) return false;
  if (s.min_local != s.max_local) *why = "nodes have different numbers of members";
  return s.min_local == s.max_local;
}
double v_hierarchical_cost(const CollArgs &a, const CommShape &s, const CostModel &m) {
  double bytes = cost_bytes(a);
  return s.nodes * m.arena.time_us(bytes / s.nodes) +
         best_flat_cost(uniform_kind(a.kind), s.nodes, v_largest_bytes(a), m.net, m.reduce_gbps);
}

// alltoallv: alltoall's pairwise formula with the largest received block
// standing for every block.
double v_pairwise_cost(const CollArgs &a, const CommShape &s, const CostModel &m) {
  return flat_cost(CollKind::kAlltoall, Algo::kPairwise, s.size, v_largest_bytes(a), p2p_link(s, m),
                   m.reduce_gbps);
}

const AlgoEntry kTable[] = {
    {CollKind::kAllreduce, Algo::kDirect, on_arena, direct_cost, allreduce_direct},
    {CollKind::kAllreduce, Algo::kHierarchical, hierarchical_applies, hierarchical_cost,
     allreduce_hierarchical},
    {CollKind::kAllreduce, Algo::kRing, anywhere, flat<Algo::kRing>, allreduce_ring},
    {CollKind::kAllreduce, Algo::kRd, anywhere, flat<Algo::kRd>, allreduce_rd},
    {CollKind::kAllgather, Algo::kDirect, on_arena, direct_cost, allgather_direct},
    {CollKind::kAllgather, Algo::kHierarchical, hierarchical_applies, hierarchical_cost,
     allgather_hierarchical},
    {CollKind::kAllgather, Algo::kRing, anywhere, flat<Algo::kRing>, allgather_ring},
    {CollKind::kAllgather, Algo::kRd, anywhere, flat<Algo::kRd>, allgather_rd},
    {CollKind::kAllgather, Algo::kCma, cma_applies, cma_cost, allgather_cma},
    {CollKind::kReduceScatter, Algo::kDirect, on_arena, direct_cost, reduce_scatter_direct},
    {CollKind::kReduceScatter, Algo::kHierarchical, hierarchical_applies, hierarchical_cost,
     reduce_scatter_hierarchical},
    {CollKind::kReduceScatter, Algo::kRing, anywhere, flat<Algo::kRing>, reduce_scatter_ring},
    {CollKind::kReduceScatter, Algo::kRd, anywhere, flat<Algo::kRd>, reduce_scatter_rd},
    {CollKind::kReduceScatter, Algo::kCma, cma_applies, cma_cost, reduce_scatter_cma},
    {CollKind::kBroadcast, Algo::kDirect, on_arena, direct_cost, broadcast_direct},
    {CollKind::kBroadcast, Algo::kHierarchical, hierarchical_applies, hierarchical_cost,
     broadcast_hierarchical},
    {CollKind::kBroadcast, Algo::kRing, anywhere, flat<Algo::kRing>, broadcast_ring},
    {CollKind::kBroadcast, Algo::kTree, anywhere, flat<Algo::kTree>, broadcast_tree},
    {CollKind::kBroadcast, Algo::kCma, cma_applies, cma_cost, broadcast_cma},
    {CollKind::kReduce, Algo::kDirect, on_arena, direct_cost, reduce_direct},
    {CollKind::kReduce, Algo::kHierarchical, hierarchical_applies, hierarchical_cost,
     reduce_hierarchical},
    {CollKind::kReduce, Algo::kRing, anywhere, flat<Algo::kRing>, reduce_ring},
    {CollKind::kReduce, Algo::kTree, anywhere, flat<Algo::kTree>, reduce_tree},
    {CollKind::kAlltoall, Algo::kDirect, on_arena, direct_cost, alltoall_direct},
    {CollKind::kAlltoall, Algo::kPairwise, anywhere, flat<Algo::kPairwise>, alltoall_pairwise},
    {CollKind::kBarrier, Algo::kDirect, on_arena, direct_cost, barrier_direct},
    {CollKind::kBarrier, Algo::kHierarchical, hierarchical_applies, hierarchical_cost,
     barrier_hierarchical},
    {CollKind::kBarrier, Algo::kRd, anywhere, flat<Algo::kRd>, barrier_rd},
    {CollKind::kAllgatherv, Algo::kDirect, on_arena, direct_cost, allgatherv_direct},
    {CollKind::kAllgatherv, Algo::kHierarchical, v_hierarchical_applies, v_hierarchical_cost,
     allgatherv_hierarchical},
    {CollKind::kAllgatherv, Algo::kRing, anywhere, v_ring_cost, allgatherv_ring},
    {CollKind::kReduceScatterv, Algo::kDirect, on_arena, direct_cost, reduce_scatterv_direct},
    {CollKind::kReduceScatterv, Algo::kHierarchical, v_hierarchical_applies, v_hierarchical_cost,
     reduce_scatterv_hierarchical},
    {CollKind::kReduceScatterv, Algo::kRing, anywhere, v_ring_cost, reduce_scatterv_ring},
    {CollKind::kAlltoallv, Algo::kPairwise, anywhere, v_pairwise_cost, alltoallv_pairwise},
};

// Logs a forced algorithm's fallback once per (collective, algorithm).
void note_fallback(Comm *c, const AlgoEntry &e, const std::string &why) {
  if (!c) return;
  static std::atomic<uint64_t> logged[int(CollKind::kCount)];
  uint64_t bit = uint64_t(1) << int(e.algo);
  if (logged[int(e.kind)].fetch_or(bit) & bit) return;
  SMD_INFO("coll", "SMD_ALGO forces %s for %s, which does not apply on %s (%s): choosing "
                   "automatically",
           algo_name(e.algo), coll_name(e.kind), c->where().c_str(), why.c_str());
}

// Logs each automatic choice once per (collective, size class, shape).
void note_choice(Comm *c, const CollArgs &a, const AlgoChoice &ch) {
  if (!c || !log_enabled(LogLevel::kInfo, "coll")) return;
  static std::mutex mu;
  static std::set<std::tuple<int, int, int, int>> seen;
  double bytes = cost_bytes(a);
  int size_class = bytes < 1 ? 0 : int(std::log2(bytes) / 4);  // x16 steps
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!seen.insert({int(a.kind), size_class, c->size(), c->placement().node_count}).second) return;
  }
  SMD_INFO("coll", "%s of %.0f bytes on %s: %s (predicted %.1f us)", coll_name(a.kind), bytes,
           c->where().c_str(), algo_name(ch.entry->algo), ch.cost_us);
}

}  // namespace

const AlgoEntry *find_algo(CollKind kind, Algo algo) {
  for (const AlgoEntry &e : kTable)
    if (e.kind == kind && e.algo == algo) return &e;
  return nullptr;
}

bool algo_supported(CollKind k, Algo a) { return a == Algo::kAuto || find_algo(k, a) != nullptr; }

AlgoChoice choose(const CollArgs &a, Algo forced, const CommShape &s, const CostModel &m,
                  Comm *c) {
  std::string why;
  if (forced != Algo::kAuto) {
    const AlgoEntry *e = find_algo(a.kind, forced);
    if (e && e->applicable(a, s, &why)) return {e, e->cost(a, s, m)};
    if (e) note_fallback(c, *e, why);
  }
  AlgoChoice best;
  for (const AlgoEntry &e : kTable) {
    if (e.kind != a.kind || !e.applicable(a, s, &why)) continue;
    double cost = e.cost(a, s, m);
    if (!best.entry || cost < best.cost_us) best = {&e, cost};
  }
  note_choice(c, a, best);
  return best;
}

}  // namespace smd
