// Which ranks share a node. A node is identified by host name plus boot id
// (two containers on one host with one kernel are one node: they can share
// memory), or by SMD_NODE_ID, which tests use to fake several nodes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/util/bytes.h"

namespace smd {

struct RankRecord {
  std::string host;      // host name, for messages
  std::string node_key;  // equal on ranks that share memory
  int32_t pid = 0;
  int32_t cpus = 1;        // CPUs this rank may run on
  int32_t numa_node = -1;  // NUMA node holding those CPUs; -1 unknown or several
  std::string cpuset;      // those CPUs, "0-3,8"; "" unknown
  // Host name + boot id even where SMD_NODE_ID fakes the node: ranks that
  // share it share CPUs, whatever node they claim.
  std::string machine_key;
};

// Records from a build without the last fields decode with them unknown
// (machine_key then equals node_key).
Bytes encode_rank_record(const RankRecord &r);
RankRecord decode_rank_record(const Bytes &b);  // throws SMD_ERR_BOOTSTRAP

// This process's record as world rank `world_rank` (SMD_NODE_ID overrides
// the node key, SMD_RANKS_PER_NODE splits it; CPUs and NUMA node as
// measure_cpu_binding() finds them).
RankRecord local_rank_record(int world_rank);

struct Topology {
  std::vector<RankRecord> ranks;               // by world rank
  std::vector<int> node_of;                    // world rank -> node index
  std::vector<int> local_rank_of;              // world rank -> rank on its node
  std::vector<std::vector<int>> node_members;  // node -> world ranks, ascending
  int node_count = 1;
  // Machines (host + boot id, whatever the node ids say): index per world
  // rank, and per machine its rank count and cpus_of() its ranks.
  std::vector<int> machine_of, machine_size, machine_cpus;

  // Nodes are numbered in the order of their lowest rank.
  static Topology compute(std::vector<RankRecord> ranks);
  // The topology of these encoded rank records, shared by every world of
  // this process formed from the same records (ranks that are threads of
  // one process): decoded and computed once, not once per rank.
  static std::shared_ptr<const Topology> shared(const std::vector<Bytes> &records);

  // CPUs the ranks of a node may run on together: the size of the union
  // of their CPU sets (ranks bound to one core each have as many CPUs as
  // ranks); where a set is unknown, the largest CPU count any of them has.
  int cpus_of_node(int node) const;
  int cpus_of(const std::vector<int> &world_ranks) const;
  // The world ranks on the same machine as `rank` (see machine_key).
  std::vector<int> machine_members(int rank) const;
};

// Node facts of a subset of world ranks (a communicator), where members[i]
// is the world rank of communicator rank i.
struct CommPlacement {
  int local_rank = 0, local_size = 1, node_index = 0, node_count = 1;
  bool single_node = true;
};
CommPlacement place(const Topology &topo, const std::vector<int> &members, int my_index);

}  // namespace smd
