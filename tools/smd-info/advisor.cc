#include "advisor.h"

#include <algorithm>
#include <map>

#include "layout_rows.h"

namespace smdinfo {
namespace {

const smd_group_kind_t kDefaultOrder[] = {SMD_GROUP_TP, SMD_GROUP_DP, SMD_GROUP_PP, SMD_GROUP_RDP,
                                          SMD_GROUP_MP};

struct Candidate {
  const char *placement, *alias;
};
const Candidate kCandidates[] = {{"DPT", "cluster"}, {"TPD", "spread"}, {"DTP", ""},
                                 {"PDT", ""},        {"PTD", ""},       {"TDP", ""}};

KindScore score(const std::vector<LayoutRow> &rows, smd_group_kind_t kind, int ranks_per_node) {
  KindScore s;
  for (const LayoutRow &row : rows) {
    if (row.group_rank[kind] != 0) continue;  // each group once, at its lowest member
    std::map<int, int> per_node;
    for (int m : row.members[kind]) ++per_node[m / ranks_per_node];
    int home = 0;  // members on the home node (which node wins a tie does not matter)
    for (const auto &[node, n] : per_node) home = std::max(home, n);
    ++s.groups;
    s.split += per_node.size() > 1;
    s.off_node += static_cast<int>(row.members[kind].size()) - home;
  }
  return s;
}

}  // namespace

Advice advise(int world, int tp, int pp, int ranks_per_node, smd_group_kind_t heaviest) {
  Advice a;
  a.priority.push_back(heaviest);
  for (auto k : kDefaultOrder)
    if (k != heaviest) a.priority.push_back(k);
  for (const Candidate &c : kCandidates) {
    std::vector<LayoutRow> rows = compute_layout(world, tp, pp, c.placement);
    PlacementScore p;
    p.placement = c.placement;
    p.alias = c.alias;
    for (auto k : kDefaultOrder) p.kinds[k] = score(rows, k, ranks_per_node);
    a.placements.push_back(std::move(p));
  }
  auto key = [&](const PlacementScore &p) {
    std::vector<int> v;
    for (auto k : a.priority) v.push_back(p.kinds[k].off_node);
    return v;
  };
  for (size_t i = 1; i < a.placements.size(); ++i)
    if (key(a.placements[i]) < key(a.placements[a.recommended])) a.recommended = i;
  return a;
}

}  // namespace smdinfo
