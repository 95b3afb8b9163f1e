// An independent reference for model-parallel rank groups, written from
// the rules rather than from the library's formula: ranks are handed out by
// counting through nested loops over the coordinates in the placement's
// letter order (right-most letter innermost), and a group is every rank
// whose other coordinates are equal.
#pragma once

#include <smd.h>

#include <array>
#include <string>
#include <vector>

namespace groupsref {

struct Layout {
  int world = 0, tp = 1, pp = 1, rdp = 1;
  // coords[rank] = {rdp_rank, pp_rank, tp_rank}
  std::vector<std::array<int, 3>> coords;
  // members[kind][rank]: the ranks of rank's group of that kind, ascending
  std::array<std::vector<std::vector<int>>, SMD_GROUP_KIND_COUNT> members;
  // group_rank[kind][rank]: its position in that group
  std::array<std::vector<int>, SMD_GROUP_KIND_COUNT> group_rank;
};

// letters: "cluster", "spread" or a permutation of "DPT"; tp * pp | world;
// sdp | rdp.
Layout make(int world, int tp, int pp, const std::string &placement, int sdp = 1);

// Every placement name: the six permutations and the two aliases.
const std::vector<std::string> &all_placements();

// Every (tp, pp) with tp * pp dividing world.
std::vector<std::array<int, 2>> valid_degrees(int world);

}  // namespace groupsref
