// The applicability tests and cost formulas that the algorithms' rows
// (each collective's file under algorithms/) share: where an algorithm can
// run, and what it is predicted to cost in the measured link parameters.
#pragma once

#include <string>

#include "core/coll/collective.h"
#include "core/coll/select/cost_model.h"
#include "core/util/dtype.h"

namespace smd {

// Bytes the flat cost formulas take: the vector, or one rank's block.
inline double cost_bytes(const CollArgs &a) {
  return double(a.count) * double(datatype_size(a.datatype));
}

// Point-to-point algorithms run on any communicator; their links are the
// network as soon as one member is on another node.
bool anywhere(const CollArgs &, const CommShape &, std::string *);
inline const LinkCost &p2p_link(const CommShape &s, const CostModel &m) {
  return s.nodes > 1 ? m.net : m.local;
}
// The point-to-point algorithm A's own formula (flat_cost).
template <Algo A>
double flat(const CollArgs &a, const CommShape &s, const CostModel &m) {
  return flat_cost(a.kind, A, s.size, cost_bytes(a), p2p_link(s, m), m.reduce_gbps);
}

// Direct algorithms need the arena: every member on one node (and host
// memory, which their rows declare).
bool on_arena(const CollArgs &a, const CommShape &s, std::string *why);
double direct_cost(const CollArgs &a, const CommShape &s, const CostModel &m);

// The cma algorithms: the arena's rounds around cross-memory reads.
bool cma_applies(const CollArgs &a, const CommShape &s, std::string *why);
double cma_cost(const CollArgs &a, const CommShape &s, const CostModel &m);

// v-collectives: the formulas of the uniform collectives with the largest
// block standing for every block.
double v_ring_cost(const CollArgs &a, const CommShape &s, const CostModel &m);
bool v_hierarchical_applies(const CollArgs &a, const CommShape &s, std::string *why);
double v_hierarchical_cost(const CollArgs &a, const CommShape &s, const CostModel &m);
double v_pairwise_cost(const CollArgs &a, const CommShape &s, const CostModel &m);

}  // namespace smd
