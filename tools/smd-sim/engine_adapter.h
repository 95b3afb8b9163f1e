// The one door from smd-sim into smd's core: the registry's own choice and
// cost prediction (core/coll/select/registry.h) for a communicator shape that
// exists only on paper, and the tag layout's widths (core/comm/tags.h).
// Nothing else in the tool includes a core header, so when the core's
// files move only engine_adapter.cc follows them.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace smdsim {

// One link class of the engine's alpha-beta model: a message of b bytes
// costs latency_us + b / (gbytes_per_s * 1e3) microseconds.
struct LinkParams {
  double latency_us = 0;
  double gbytes_per_s = 1;
};

// The engine's link classes (CostModel in the core), as smd-sim fills them
// from a cluster description.
struct EngineLinks {
  LinkParams arena;  // a node's shared-memory arena step
  LinkParams local;  // point-to-point between ranks of one node
  LinkParams cma;    // one cross-memory read of a peer's buffer
  LinkParams net;    // point-to-point between nodes, per rank
  double reduce_gbytes_per_s = 3;
};

// A communicator the engine has never seen: `nodes` nodes of
// `ranks_per_node` consecutive ranks each.
struct EngineShape {
  int nodes = 1;
  int ranks_per_node = 1;
  bool device_memory = false;  // buffers in GPU memory (no host arena algorithms)
  bool cma = false;            // cross-memory reads work between a node's ranks
};

struct EngineChoice {
  std::string algorithm;  // the registry's name: "ring", "hierarchical", ...
  double predicted_us = 0;
};

class Engine {
 public:
  // The cost model is built through the engine's tuning-file parser, so it
  // holds exactly what SMD_TUNING_FILE = tuning_text() gives a real run.
  // Throws std::exception with the parser's message on values it refuses.
  explicit Engine(const EngineLinks &links);
  ~Engine();
  Engine(const Engine &) = delete;
  Engine &operator=(const Engine &) = delete;

  // The tuning-file text of this model (SMD_TUNING_FILE format).
  std::string tuning_text() const;
  // The automatic choice for `collective` (smd's name: "allreduce", ...)
  // on `count` elements of `element_bytes` bytes (1, 2, 4 or 8), in the
  // count's meaning of the C API (allgather: sent per rank;
  // reduce_scatter: received per rank; alltoall: per peer). False with
  // *error set on an unknown collective, element size or shape.
  bool choose(const std::string &collective, double count, int element_bytes,
              const EngineShape &shape, EngineChoice *out, std::string *error) const;
  // Every algorithm that applies to the call, each with its predicted
  // time (what SMD_ALGO forcing it would run), the automatic choice among
  // them. Same errors as choose().
  bool candidates(const std::string &collective, double count, int element_bytes,
                  const EngineShape &shape, std::vector<EngineChoice> *out,
                  std::string *error) const;

 private:
  struct Model;
  std::unique_ptr<Model> model_;
};

// The collectives the registry has rows for, by name (v-collectives left
// out: their cost needs per-rank blocks).
std::vector<std::string> engine_collectives();

// How a world of `ranks` ranks stands against the tag and rank limits.
struct TagBudget {
  int max_ranks = 0;                // the core's limit on a communicator's ranks
  unsigned step_bits = 0;           // the collective tag's step field at this size
  unsigned sequence_bits = 0;       // what is left for the call counter and salt
  unsigned transport_tag_bits = 0;  // bits the core's tags use
};
TagBudget engine_tag_budget(int ranks);

}  // namespace smdsim
