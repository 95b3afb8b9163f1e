// Topology queries: where each rank of a communicator runs, from the rank
// records every rank published when the world formed.
#include <smd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "core/api/guard.h"
#include "core/api/handles.h"
#include "core/api/validate.h"

using namespace smd;

namespace {

// Copies text into a fixed field, always NUL-terminated. A CPU list that
// does not fit is cut after a whole entry and marked with ",...".
void copy_text(char *dst, size_t cap, const std::string &s, bool list) {
  if (s.size() < cap) {
    memcpy(dst, s.c_str(), s.size() + 1);
    return;
  }
  size_t keep = cap - 1;
  if (list) {
    const size_t marker = 4;  // ",..."
    size_t cut = s.rfind(',', cap - 1 - marker);
    keep = cut == std::string::npos ? 0 : cut;
    memcpy(dst, s.data(), keep);
    memcpy(dst + keep, ",...", marker);
    keep += marker;
  } else {
    memcpy(dst, s.data(), keep);
  }
  dst[keep] = 0;
}

}  // namespace

extern "C" {

SMD_API smd_result_t smd_comm_rank_info(const smd_comm_t *comm, int rank, smd_rank_info_t *info) {
  return guarded("smd_comm_rank_info", [&] {
    require_out(info, "info");
    check_versioned(
        "smd_rank_info_t", info->struct_size, info->version, sizeof(smd_rank_info_t),
        SMD_RANK_INFO_VERSION, SMD_RANK_INFO_VERSION,
        "set struct_size to sizeof(smd_rank_info_t) and version to SMD_RANK_INFO_VERSION");
    auto c = comm_of(comm);
    if (rank < 0 || rank >= c->size())
      fail(SMD_ERR_INVALID_ARGUMENT, "rank %d is not in [0, %d)", rank, c->size());
    const Topology &topo = c->ctx().topology();
    int world_rank = c->world_rank(rank);
    const RankRecord &rec = topo.ranks[static_cast<size_t>(world_rank)];
    CommPlacement where = place(topo, c->members(), rank);

    smd_rank_info_t out;
    memset(&out, 0, sizeof out);
    out.struct_size = info->struct_size;
    out.version = info->version;
    out.rank = rank;
    out.world_rank = world_rank;
    out.node_index = where.node_index;
    out.local_rank = where.local_rank;
    out.local_size = where.local_size;
    out.pid = rec.pid;
    out.numa_node = rec.numa_node;
    out.cpus = rec.cpus;
    copy_text(out.host, sizeof out.host, rec.host, false);
    copy_text(out.cpuset, sizeof out.cpuset, rec.cpuset, true);
    *info = out;
  });
}

}  // extern "C"
