// The algorithm registry: the rows of every algorithm of every
// collective, each with its applicability test, its predicted cost and
// its body, declared beside the algorithms in each collective's file
// (algorithms/<collective>.cc). SMD_ALGO forces one by name (falling back
// to the automatic choice, with the reason logged, where it does not
// apply); the automatic choice is the applicable entry of lowest predicted
// cost. Adding an algorithm is adding a row (see docs/ARCHITECTURE.md).
#pragma once

#include <span>
#include <string>

#include "core/coll/collective.h"
#include "core/coll/select/cost_model.h"

namespace smd {

class Comm;

// The memory kinds a row applies to: a bit per MemoryKind.
enum MemoryKinds : unsigned {
  kHostMemory = 1u << int(MemoryKind::kHost),
  kAnyMemory = kHostMemory | 1u << int(MemoryKind::kDevice),
};

// A point-to-point algorithm's predicted microseconds among p > 1 ranks
// joined by links of cost `link`, for `bytes` (the vector, or one rank's
// block), with its reductions at reduce_gbps. Each such algorithm's file
// defines its own beside its row.
using LinkFormula = double (*)(int p, double bytes, const LinkCost &link, double reduce_gbps);

struct AlgoEntry {
  CollKind kind;
  Algo algo;
  // Its name in SMD_ALGO and the logs; every row of one Algo has the same.
  const char *name;
  // Where its buffers may lie; choose() skips it for other memory kinds.
  MemoryKinds memory;
  // True if it can run this call; otherwise *why says what is missing.
  bool (*applicable)(const CollArgs &a, const CommShape &s, std::string *why);
  // Predicted microseconds.
  double (*cost)(const CollArgs &a, const CommShape &s, const CostModel &m);
  void (*run)(Comm &c, const CollArgs &a);
  // True if the algorithm compares the members' calls itself (the arena's
  // descriptors): run_collective then adds no agreement check around it.
  bool self_checked = false;
  // A point-to-point row's formula (`cost` is it over the communicator's
  // links, see p2p_row in row_terms.h); null for other rows. Hierarchical
  // algorithms price their phases between nodes with it.
  LinkFormula link_formula = nullptr;
};

// True if the row applies to buffers of this memory kind.
inline bool applies_to(const AlgoEntry &e, MemoryKind k) { return e.memory & (1u << int(k)); }

// Every row, in the order the automatic choice walks them (the first of
// equal costs wins): the collectives' rows one after another.
std::span<const AlgoEntry> algo_rows();

// Each collective's rows, in its own file under algorithms/.
std::span<const AlgoEntry> allreduce_rows();
std::span<const AlgoEntry> allgather_rows();
std::span<const AlgoEntry> reduce_scatter_rows();
std::span<const AlgoEntry> broadcast_rows();
std::span<const AlgoEntry> reduce_rows();
std::span<const AlgoEntry> alltoall_rows();
std::span<const AlgoEntry> barrier_rows();
std::span<const AlgoEntry> allgatherv_rows();
std::span<const AlgoEntry> reduce_scatterv_rows();
std::span<const AlgoEntry> alltoallv_rows();

// The entry of (kind, algo), or null if the collective has no such algorithm.
const AlgoEntry *find_algo(CollKind kind, Algo algo);

// Predicted microseconds of `kind`'s point-to-point algorithm `algo`
// among p ranks over links of cost `link` (0 for one rank): its row's
// formula. Throws SMD_ERR_INTERNAL if the collective has no such row.
double flat_cost(CollKind kind, Algo algo, int p, double bytes, const LinkCost &link,
                 double reduce_gbps);
// The cheapest of the collective's point-to-point rows (what a
// sub-communicator's own automatic choice would pick).
double best_flat_cost(CollKind kind, int p, double bytes, const LinkCost &link, double reduce_gbps);

struct AlgoChoice {
  const AlgoEntry *entry = nullptr;
  double cost_us = 0;
};

// The choice for this call: forced (when it applies) or cheapest. The
// same on every member, since it depends only on the arguments, the
// communicator's shape and the cost model (loaded identically). `c`, if
// given, is named in the info log of each choice.
AlgoChoice choose(const CollArgs &a, Algo forced, const CommShape &s, const CostModel &m,
                  Comm *c = nullptr);

}  // namespace smd
