// The environment each rank starts with: who it is and where to meet.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace smdrun {

// What every rank of one launch shares.
struct JobSpec {
  int world_size = 1;
  std::optional<int> nodes;  // --nodes: fake node count
  std::string master_addr;
  int master_port = 0;  // smd's store: SMD_MASTER_PORT
  // torch's MASTER_PORT: another port, so that a script that starts
  // torch.distributed (which serves its own store there) and smd together
  // gets both; 0 = the same as master_port.
  int torch_port = 0;
  std::string token;
};

// Where a rank sits. Without --nodes the whole machine is one node and
// node is empty, so SMD_NODE_ID is left as smdrun found it.
struct Placement {
  std::optional<int> node;
  int local_rank = 0;
  int local_size = 1;
};

// With K fake nodes, contiguous blocks of ceil(N/K) ranks share a node;
// the last block may be short and trailing nodes empty.
Placement place_rank(int rank, int world_size, std::optional<int> nodes);

// `base` (smdrun's environment, NAME=value strings) with the SMD_* and
// torchrun variables for `rank` replacing any inherited ones.
std::vector<std::string> rank_environment(const JobSpec &job, int rank,
                                          const std::vector<std::string> &base);

}  // namespace smdrun
