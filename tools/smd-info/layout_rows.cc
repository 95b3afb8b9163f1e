#include "layout_rows.h"

#include "options.h"

namespace smdinfo {

const char *kind_name(smd_group_kind_t kind) {
  switch (kind) {
    case SMD_GROUP_TP: return "tp";
    case SMD_GROUP_PP: return "pp";
    case SMD_GROUP_DP: return "dp";
    case SMD_GROUP_RDP: return "rdp";
    case SMD_GROUP_MP: return "mp";
    case SMD_GROUP_SDP: return "sdp";
    default: return "world";
  }
}

std::vector<LayoutRow> compute_layout(int world, int tp, int pp, const std::string &placement) {
  smd_groups_config_t config = SMD_GROUPS_CONFIG_INIT;
  config.tp = tp;
  config.pp = pp;
  config.placement = placement.c_str();
  std::vector<LayoutRow> rows(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) {
    rows[r].rank = r;
    for (int k = 0; k < SMD_GROUP_KIND_COUNT; ++k) {
      auto kind = static_cast<smd_group_kind_t>(k);
      std::vector<int> &m = rows[r].members[k];
      m.resize(static_cast<size_t>(world));
      int count = 0;
      smd_result_t res = smd_groups_layout(&config, world, r, kind, &rows[r].group_rank[k],
                                           m.data(), world, &count);
      if (res != SMD_SUCCESS) throw UsageError{smd_last_error()};
      m.resize(static_cast<size_t>(count));
    }
  }
  return rows;
}

}  // namespace smdinfo
