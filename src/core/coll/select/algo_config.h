// Algorithm names (the registry rows') and SMD_ALGO: which algorithm each collective uses when
// the choice is forced, for benchmarking and for testing every algorithm.
#pragma once

#include <array>
#include <string>

namespace smd {

enum class CollKind : int {
  kAllreduce = 0,
  kAllgather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAlltoall,
  kBarrier,
  kAllgatherv,
  kReduceScatterv,
  kAlltoallv,
  kCount
};

enum class Algo : int {
  kAuto = 0,
  kDirect,        // shared-memory staging: every rank reads its peers' memory
  kRing,          // ring / pipelined chain over point-to-point messages
  kRd,            // recursive doubling / halving / dissemination
  kTree,          // binomial tree
  kPairwise,      // pairwise exchange (alltoall, alltoallv)
  kHierarchical,  // node phases on the arena, rail phases across nodes
  kCma,           // cross-memory reads of peers' buffers on one node (one copy)
  kHerring,       // push/pull to per-member servers, one member per node (herring.cc)
  kCount
};

const char *coll_name(CollKind k);
// "auto", or the name its registry rows declare ("?" for a value no row has).
const char *algo_name(Algo a);
// True if the collective has this algorithm (the registry has its row).
bool algo_supported(CollKind k, Algo a);

struct AlgoConfig {
  std::array<Algo, static_cast<int>(CollKind::kCount)> forced{};  // kAuto = choose

  // "ring", "allreduce=ring,allgather=direct". Throws SMD_ERR_INVALID_ARGUMENT
  // on unknown names or an algorithm a collective does not have.
  static AlgoConfig parse(const std::string &text);
  Algo get(CollKind k) const { return forced[static_cast<int>(k)]; }
  std::string describe() const;
};

}  // namespace smd
