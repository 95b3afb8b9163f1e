// Every rank's place in a model-parallel layout, as smd_groups_layout()
// computes it: what the groups table prints and the advisor scores.
#pragma once

#include <smd.h>

#include <array>
#include <string>
#include <vector>

namespace smdinfo {

struct LayoutRow {
  int rank = 0;
  std::array<int, SMD_GROUP_KIND_COUNT> group_rank{};            // by smd_group_kind_t
  std::array<std::vector<int>, SMD_GROUP_KIND_COUNT> members{};  // ascending
};

// "tp", "pp", "dp", "rdp", "mp", "world".
const char *kind_name(smd_group_kind_t kind);

// Throws UsageError with the library's message for a configuration that
// does not fit (a bad degree or placement is the user's input).
std::vector<LayoutRow> compute_layout(int world, int tp, int pp, const std::string &placement);

}  // namespace smdinfo
