#include "reference.h"

#include <stdexcept>

namespace groupsref {

const std::vector<std::string> &all_placements() {
  static const std::vector<std::string> names = {"cluster", "spread", "DPT", "DTP",
                                                 "PDT",     "PTD",    "TDP", "TPD"};
  return names;
}

std::vector<std::array<int, 2>> valid_degrees(int world) {
  std::vector<std::array<int, 2>> out;
  for (int tp = 1; tp <= world; ++tp)
    for (int pp = 1; tp * pp <= world; ++pp)
      if (world % (tp * pp) == 0) out.push_back({tp, pp});
  return out;
}

Layout make(int world, int tp, int pp, const std::string &placement, int sdp) {
  std::string letters = placement == "cluster" ? "DPT" : placement == "spread" ? "TPD" : placement;
  Layout l;
  l.world = world;
  l.tp = tp;
  l.pp = pp;
  l.rdp = world / (tp * pp);
  auto slot = [](char letter) {  // index into {rdp, pp, tp}
    switch (letter) {
      case 'D': return 0;
      case 'P': return 1;
      case 'T': return 2;
    }
    throw std::invalid_argument("reference: bad placement");
  };
  const int degree[3] = {l.rdp, pp, tp};
  int outer = slot(letters.at(0)), middle = slot(letters.at(1)), inner = slot(letters.at(2));
  l.coords.resize(static_cast<size_t>(world));
  int next = 0;
  for (int a = 0; a < degree[outer]; ++a)
    for (int b = 0; b < degree[middle]; ++b)
      for (int c = 0; c < degree[inner]; ++c) {
        std::array<int, 3> &co = l.coords[static_cast<size_t>(next++)];
        co[outer] = a;
        co[middle] = b;
        co[inner] = c;
      }
  // Which coordinates members of a group share: {rdp, pp, tp}.
  const std::array<std::array<bool, 3>, SMD_GROUP_SDP> same = {{
      {false, false, false},  // WORLD
      {true, true, false},    // TP
      {true, false, true},    // PP
      {false, true, false},   // DP
      {false, true, true},    // RDP
      {true, false, false},   // MP
  }};
  for (int k = 0; k < SMD_GROUP_SDP; ++k) {
    l.members[k].resize(static_cast<size_t>(world));
    l.group_rank[k].resize(static_cast<size_t>(world));
    for (int r = 0; r < world; ++r) {
      for (int q = 0; q < world; ++q) {
        bool in = true;
        for (int x = 0; x < 3; ++x)
          if (same[k][x] && l.coords[q][x] != l.coords[r][x]) in = false;
        if (in) {
          if (q == r) l.group_rank[k][r] = static_cast<int>(l.members[k][r].size());
          l.members[k][r].push_back(q);
        }
      }
    }
  }
  // SDP: the RDP group's members in chunks of sdp, taken in order.
  l.members[SMD_GROUP_SDP].resize(static_cast<size_t>(world));
  l.group_rank[SMD_GROUP_SDP].resize(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) {
    const std::vector<int> &rdp = l.members[SMD_GROUP_RDP][r];
    int at = l.group_rank[SMD_GROUP_RDP][r], first = at / sdp * sdp;
    l.members[SMD_GROUP_SDP][r].assign(rdp.begin() + first, rdp.begin() + first + sdp);
    l.group_rank[SMD_GROUP_SDP][r] = at - first;
  }
  return l;
}

}  // namespace groupsref
