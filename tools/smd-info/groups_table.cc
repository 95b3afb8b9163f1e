// smd-info groups: every rank's coordinates and groups, as a table or JSON.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "text_out.h"
#include "layout_rows.h"

namespace smdinfo {
namespace {

// Columns after "rank": the ranks in groups, then the groups themselves.
const smd_group_kind_t kRankColumns[] = {SMD_GROUP_RDP, SMD_GROUP_PP, SMD_GROUP_TP, SMD_GROUP_DP,
                                         SMD_GROUP_MP};
const smd_group_kind_t kGroupColumns[] = {SMD_GROUP_TP, SMD_GROUP_PP, SMD_GROUP_RDP, SMD_GROUP_DP,
                                          SMD_GROUP_MP};

std::vector<std::string> cells_of(const LayoutRow &row) {
  std::vector<std::string> cells = {std::to_string(row.rank)};
  for (auto k : kRankColumns) cells.push_back(std::to_string(row.group_rank[k]));
  for (auto k : kGroupColumns) cells.push_back(plain_list(row.members[k]));
  return cells;
}

void print_table(const Options &o, const std::vector<LayoutRow> &rows) {
  int rdp = o.world / (o.tp * o.pp);
  printf("world %d: tp %d, pp %d, rdp %d, placement %s\n", o.world, o.tp, o.pp, rdp,
         o.placement.c_str());
  std::vector<std::string> header = {"rank"};
  for (auto k : kRankColumns) header.push_back(std::string(kind_name(k)) + "_rank");
  for (auto k : kGroupColumns) header.push_back(std::string(kind_name(k)) + "_group");
  std::vector<std::vector<std::string>> lines = {header};
  for (const auto &row : rows) lines.push_back(cells_of(row));
  for (const std::string &line : align_columns(lines)) puts(line.c_str());
}

void print_json(const std::vector<LayoutRow> &rows) {
  puts("[");
  for (size_t i = 0; i < rows.size(); ++i) {
    const LayoutRow &row = rows[i];
    std::string obj = "{\"rank\":" + std::to_string(row.rank);
    for (auto k : kRankColumns)
      obj += ",\"" + std::string(kind_name(k)) + "_rank\":" + std::to_string(row.group_rank[k]);
    for (auto k : kGroupColumns)
      obj += ",\"" + std::string(kind_name(k)) + "_group\":" + json_list(row.members[k]);
    obj += i + 1 < rows.size() ? "}," : "}";
    puts(obj.c_str());
  }
  puts("]");
}

}  // namespace

int run_groups_table(const Options &o) {
  std::vector<LayoutRow> rows = compute_layout(o.world, o.tp, o.pp, o.placement);
  if (o.json) print_json(rows);
  else print_table(o, rows);
  return 0;
}

}  // namespace smdinfo
