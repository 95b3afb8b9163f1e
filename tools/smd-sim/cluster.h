// A cluster as smd-sim reads it (a JSON file; docs/SCALE.md, Simulator,
// shows one): nodes, ranks per node, the links inside a node and between
// nodes, and the data-parallel workloads to time on it.
#pragma once

#include <string>
#include <vector>

#include "engine_adapter.h"

namespace smdsim {

// A data-parallel training step. data_parallel: every rank holds every
// parameter and allreduces its gradients bucket by bucket during the
// backward pass. sharded: every rank holds 1/ranks of the parameters,
// allgathers each bucket before its forward and again before its backward
// computation, and reduce-scatters its gradients after.
struct Workload {
  std::string name;
  std::string mode;  // "data_parallel" or "sharded"
  double parameters = 0;
  int element_bytes = 2;                 // of gradients and gathered parameters
  double bucket_bytes = 25e6;            // per bucket
  double compute_ms = 100;               // forward + backward per step, per rank
  double backward_fraction = 2.0 / 3.0;  // of compute_ms
};

struct Cluster {
  std::string name;
  int ranks_per_node = 8;
  std::vector<int> nodes{1};
  bool device_memory = false;
  bool cma = false;
  LinkParams intra_node{3, 100};    // point-to-point between ranks of a node
  LinkParams arena{0, 0};           // a node's arena step; intra_node when absent
  LinkParams inter_rail{15, 12.5};  // one rail (NIC) between nodes
  int rails = 1;
  double reduce_gbytes_per_s = 100;
  std::vector<std::string> sources;
  std::vector<Workload> workloads;

  // The engine's link classes. A rank's share of the network is the rails'
  // bandwidth over the ranks that share them (every rank of a node sends
  // at once in the ring and rail phases), at most one rail's.
  EngineLinks engine_links() const;
  EngineShape shape(int node_count) const;
};

// Parses and checks the description; throws std::runtime_error naming the
// field on anything missing or out of range.
Cluster parse_cluster(const std::string &json_text);
Cluster read_cluster(const std::string &path);

}  // namespace smdsim
