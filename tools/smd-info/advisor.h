// The placement advisor: how each placement spreads each group kind over
// nodes of contiguous ranks, and which placement keeps the heaviest
// traffic inside nodes. The metric is described in smd-info's usage text
// and docs/GROUPS.md.
#pragma once

#include <smd.h>

#include <array>
#include <string>
#include <vector>

namespace smdinfo {

struct KindScore {
  int groups = 0;    // groups of the kind
  int split = 0;     // ... spanning more than one node
  int off_node = 0;  // members not on their group's home node, summed
};

struct PlacementScore {
  std::string placement;                                // the letters, "DPT"
  std::string alias;                                    // "cluster", "spread" or ""
  std::array<KindScore, SMD_GROUP_KIND_COUNT> kinds{};  // by smd_group_kind_t
};

struct Advice {
  std::vector<smd_group_kind_t> priority;  // heaviest first
  std::vector<PlacementScore> placements;  // in table order
  size_t recommended = 0;                  // index into placements
};

Advice advise(int world, int tp, int pp, int ranks_per_node, smd_group_kind_t heaviest);

}  // namespace smdinfo
