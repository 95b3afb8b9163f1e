// The applicability tests and cost formulas that the algorithms' rows
// (each collective's file under algorithms/) share: where an algorithm can
// run, and what it is predicted to cost in the measured link parameters.
#pragma once

#include <cmath>
#include <string>

#include "core/coll/collective.h"
#include "core/coll/create/hierarchy.h"
#include "core/coll/select/cost_model.h"
#include "core/coll/select/registry.h"
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
// A point-to-point formula's prediction: nothing to do on one rank.
inline double over_links(LinkFormula f, int p, double bytes, const LinkCost &link,
                         double reduce_gbps) {
  return p <= 1 ? 0 : f(p, bytes, link, reduce_gbps);
}
// The formula F over the communicator's links.
template <LinkFormula F>
double p2p_cost(const CollArgs &a, const CommShape &s, const CostModel &m) {
  return over_links(F, s.size, cost_bytes(a), p2p_link(s, m), m.reduce_gbps);
}
// A point-to-point algorithm's row: it runs anywhere, on any memory, and
// costs its own formula F over the communicator's links.
template <LinkFormula F>
constexpr AlgoEntry p2p_row(CollKind kind, Algo algo, const char *name,
                            void (*run)(Comm &c, const CollArgs &a)) {
  return {kind, algo, name, kAnyMemory, anywhere, p2p_cost<F>, run, false, F};
}
// Terms of the formulas: the rounds of recursive doubling or a binomial
// tree, whether p is a power of two (else recursive doubling folds the
// ranks beyond one in two extra steps), and the time to reduce `bytes` of
// output with two inputs.
inline double log2_rounds(int p) { return p <= 1 ? 0 : std::ceil(std::log2(double(p))); }
inline bool power_of_two(int p) { return (p & (p - 1)) == 0; }
inline double reduce_us(double bytes, double reduce_gbps) { return bytes / (reduce_gbps * 1e3); }

// Direct algorithms need the arena: every member on one node (and host
// memory, which their rows declare).
bool on_arena(const CollArgs &a, const CommShape &s, std::string *why);
double direct_cost(const CollArgs &a, const CommShape &s, const CostModel &m);

// The cma algorithms: the arena's rounds around cross-memory reads.
bool cma_applies(const CollArgs &a, const CommShape &s, std::string *why);
double cma_cost(const CollArgs &a, const CommShape &s, const CostModel &m);

// The rows every collective with these algorithms has: direct (on the
// arena, host memory, checking the members' calls itself), hierarchical
// (any memory, over nodes) and cma (host memory, cross-memory reads).
constexpr AlgoEntry direct_row(CollKind kind, void (*run)(Comm &c, const CollArgs &a)) {
  return {kind, Algo::kDirect, "direct", kHostMemory, on_arena, direct_cost, run, true};
}
constexpr AlgoEntry hierarchical_row(CollKind kind, void (*run)(Comm &c, const CollArgs &a)) {
  return {kind,       Algo::kHierarchical,  "hierarchical",
          kAnyMemory, hierarchical_applies, hierarchical_cost,
          run};
}
constexpr AlgoEntry cma_row(CollKind kind, void (*run)(Comm &c, const CollArgs &a)) {
  return {kind, Algo::kCma, "cma", kHostMemory, cma_applies, cma_cost, run};
}

// v-collectives: the formulas of the uniform collectives with the largest
// block standing for every block.
double v_ring_cost(const CollArgs &a, const CommShape &s, const CostModel &m);
bool v_hierarchical_applies(const CollArgs &a, const CommShape &s, std::string *why);
double v_hierarchical_cost(const CollArgs &a, const CommShape &s, const CostModel &m);
double v_pairwise_cost(const CollArgs &a, const CommShape &s, const CostModel &m);

}  // namespace smd
