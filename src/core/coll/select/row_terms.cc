#include "core/coll/select/row_terms.h"

#include "core/coll/create/hierarchy.h"

namespace smd {

bool anywhere(const CollArgs &, const CommShape &, std::string *) { return true; }

// Direct algorithms need the arena: every member on one node.
bool on_arena(const CollArgs &, const CommShape &s, std::string *why) {
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
    *why =
        "cross-memory attach is unavailable between the members; the communicator's "
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
namespace {
CollKind uniform_kind(CollKind k) {
  return k == CollKind::kAllgatherv ? CollKind::kAllgather : CollKind::kReduceScatter;
}
double v_largest_bytes(const CollArgs &a) {
  return a.blocks ? double(a.blocks->largest) * double(datatype_size(a.datatype)) : 0;
}
}  // namespace
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

}  // namespace smd
