#include "rank_env.h"

#include <algorithm>
#include <utility>

namespace smdrun {

Placement place_rank(int rank, int world_size, std::optional<int> nodes) {
  Placement p;
  if (!nodes) {
    p.local_rank = rank;
    p.local_size = world_size;
    return p;
  }
  int block = (world_size + *nodes - 1) / *nodes;
  int node = rank / block;
  p.node = node;
  p.local_rank = rank - node * block;
  p.local_size = std::min(block, world_size - node * block);
  return p;
}

std::vector<std::string> rank_environment(const JobSpec &job, int rank,
                                          const std::vector<std::string> &base) {
  Placement place = place_rank(rank, job.world_size, job.nodes);
  std::vector<std::pair<std::string, std::string>> vars = {
      {"SMD_RANK", std::to_string(rank)},
      {"SMD_WORLD_SIZE", std::to_string(job.world_size)},
      {"SMD_LOCAL_RANK", std::to_string(place.local_rank)},
      {"SMD_LOCAL_SIZE", std::to_string(place.local_size)},
      {"SMD_MASTER_ADDR", job.master_addr},
      {"SMD_MASTER_PORT", std::to_string(job.master_port)},
      {"SMD_JOB_TOKEN", job.token},
      {"RANK", std::to_string(rank)},
      {"WORLD_SIZE", std::to_string(job.world_size)},
      {"LOCAL_RANK", std::to_string(place.local_rank)},
      {"LOCAL_WORLD_SIZE", std::to_string(place.local_size)},
      {"MASTER_ADDR", job.master_addr},
      {"MASTER_PORT", std::to_string(job.torch_port ? job.torch_port : job.master_port)},
  };
  if (place.node) vars.emplace_back("SMD_NODE_ID", "node" + std::to_string(*place.node));

  auto ours = [&](const std::string &entry) {
    std::string name = entry.substr(0, entry.find('='));
    return std::any_of(vars.begin(), vars.end(), [&](const auto &v) { return v.first == name; });
  };
  std::vector<std::string> env;
  std::copy_if(base.begin(), base.end(), std::back_inserter(env),
               [&](const std::string &e) { return !ours(e); });
  for (const auto &[name, value] : vars) env.push_back(name + "=" + value);
  return env;
}

}  // namespace smdrun
