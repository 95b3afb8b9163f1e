// The two-level view of a communicator that spans nodes: its members on
// this rank's node (a sub-communicator with a shared-memory arena) and the
// rail of members with this rank's local index on every node (a
// sub-communicator over the network). Hierarchical algorithms run their
// phases on these; they are built collectively at the first hierarchical
// collective and live as long as the communicator.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/coll/collective.h"
#include "core/coll/select/cost_model.h"
#include "core/coll/memory_ops.h"

namespace smd {

class Comm;

struct Hierarchy {
  int nodes = 1;
  int node_index = 0;   // this rank's node, in order of lowest communicator rank
  int local_rank = 0;   // this rank's index among its node's members
  bool uniform = true;  // every node has as many members
  // Each node's members are consecutive communicator ranks (node-major
  // order, as launchers place ranks): allgather and reduce_scatter need it
  // to write node blocks in place.
  bool node_major = true;
  std::vector<std::vector<int>> node_ranks;  // node -> communicator ranks
  std::shared_ptr<Comm> node;                // this node's members
  std::shared_ptr<Comm> rail;                // local index = mine, one per node

  // Memory of the call's kind for blocks between the phases, kept across
  // calls (its pages are touched once, not per call).
  uint8_t *scratch(const MemoryOps &ops, size_t bytes);

 private:
  std::unique_ptr<Scratch> scratch_;
  const MemoryOps *scratch_ops_ = nullptr;
  size_t scratch_bytes_ = 0;
};

// Builds it on first use (collective over the communicator).
Hierarchy &hierarchy_of(Comm &c);

// The hierarchical allreduce splits a vector into slices of whole cache
// lines per node member: it takes the reduce-scatter/rail/allgather way
// for vectors of at least this many elements, the leaders' way below.
size_t hier_split_unit(int local_size, size_t elem_size);

// Applicability and cost of the hierarchical algorithms (registry rows).
bool hierarchical_applies(const CollArgs &a, const CommShape &s, std::string *why);
double hierarchical_cost(const CollArgs &a, const CommShape &s, const CostModel &m);

}  // namespace smd
