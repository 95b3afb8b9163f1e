// smd-info groups --nodes N --ranks-per-node L: the advisor's report, as a
// table or JSON.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "advisor.h"
#include "commands.h"
#include "text_out.h"
#include "layout_rows.h"

namespace smdinfo {
namespace {

std::string label(const PlacementScore &p) {
  return p.alias.empty() ? p.placement : p.placement + " (" + p.alias + ")";
}

bool is_given(const Options &o, const PlacementScore &p) {
  return o.placement_given && (o.placement == p.placement || o.placement == p.alias);
}

void print_text(const Options &o, const Advice &a) {
  printf("%d ranks on %d nodes of %d (rank r on node r / %d): tp %d, pp %d, rdp %d\n", o.world,
         o.nodes, o.ranks_per_node, o.ranks_per_node, o.tp, o.pp, o.world / (o.tp * o.pp));
  printf("off-node members per group kind (split groups/groups); ranked by %s",
         kind_name(a.priority[0]));
  for (size_t i = 1; i < a.priority.size(); ++i)
    printf("%s%s", i == 1 ? ", then " : ", ", kind_name(a.priority[i]));
  printf("\n\n");
  std::vector<std::vector<std::string>> lines;
  std::vector<std::string> header = {"placement"};
  for (auto k : a.priority) header.push_back(kind_name(k));
  lines.push_back(header);
  for (const auto &p : a.placements) {
    std::vector<std::string> cells = {label(p)};
    for (auto k : a.priority) {
      const KindScore &s = p.kinds[k];
      cells.push_back(std::to_string(s.off_node) + " (" + std::to_string(s.split) + "/" +
                      std::to_string(s.groups) + ")");
    }
    lines.push_back(cells);
  }
  std::vector<std::string> text = align_columns(lines);
  for (size_t i = 0; i < text.size(); ++i) {
    std::string line = text[i];
    if (i > 0 && i - 1 == a.recommended) line += "  <- recommended";
    if (i > 0 && is_given(o, a.placements[i - 1])) line += "  <- given";
    puts(line.c_str());
  }
  const PlacementScore &best = a.placements[a.recommended];
  const char *heaviest = kind_name(a.priority[0]);
  if (best.kinds[a.priority[0]].off_node == 0)
    printf("\nrecommended: %s: every %s group stays inside a node\n", label(best).c_str(),
           heaviest);
  else
    printf(
        "\nrecommended: %s: no placement keeps every %s group inside a node; this one has the "
        "fewest %s members off their home node\n",
        label(best).c_str(), heaviest, heaviest);
}

void print_json(const Options &o, const Advice &a) {
  printf("{\"world\":%d,\"tp\":%d,\"pp\":%d,\"rdp\":%d,\"nodes\":%d,\"ranks_per_node\":%d,",
         o.world, o.tp, o.pp, o.world / (o.tp * o.pp), o.nodes, o.ranks_per_node);
  printf("\"priority\":[");
  for (size_t i = 0; i < a.priority.size(); ++i)
    printf("%s%s", i ? "," : "", json_string(kind_name(a.priority[i])).c_str());
  printf("],\n\"placements\":[\n");
  for (size_t i = 0; i < a.placements.size(); ++i) {
    const PlacementScore &p = a.placements[i];
    printf("{\"placement\":%s,\"alias\":%s", json_string(p.placement).c_str(),
           json_string(p.alias).c_str());
    for (auto k : a.priority) {
      const KindScore &s = p.kinds[k];
      printf(",%s:{\"groups\":%d,\"split_groups\":%d,\"off_node_members\":%d}",
             json_string(kind_name(k)).c_str(), s.groups, s.split, s.off_node);
    }
    printf("}%s\n", i + 1 < a.placements.size() ? "," : "");
  }
  printf("],\n\"recommended\":%s", json_string(a.placements[a.recommended].placement).c_str());
  for (const auto &p : a.placements)
    if (is_given(o, p)) printf(",\"given\":%s", json_string(p.placement).c_str());
  printf("}\n");
}

}  // namespace

int run_advisor(const Options &o) {
  if (o.placement_given) compute_layout(o.world, o.tp, o.pp, o.placement);  // a usage error if bad
  Advice a = advise(o.world, o.tp, o.pp, o.ranks_per_node, o.heaviest);
  if (o.json) print_json(o, a);
  else print_text(o, a);
  return 0;
}

}  // namespace smdinfo
