// Rank-group entry points: the model-parallel groups of a communicator
// (smd_groups_*), and the same layout computed without communicating.
#include <smd.h>

#include <algorithm>
#include <cstddef>

#include "core/api/config_init.h"
#include "core/api/guard.h"
#include "core/api/handles.h"
#include "core/api/on_parent.h"
#include "core/api/validate.h"
#include "core/groups/groups.h"

using namespace smd;

namespace {

// The bytes of an smd_groups_config_t of each version (version 1 ended
// with placement).
size_t config_size(uint32_t version) {
  return version >= 2 ? sizeof(smd_groups_config_t) : offsetof(smd_groups_config_t, sdp);
}

// The caller's struct as a request; problems reading it are reported in
// the request rather than thrown, so the rank still takes part in the
// collective check and its peers fail too instead of waiting for it.
GroupsRequest read_config(const smd_groups_config_t *c) {
  GroupsRequest r;
  r.readable = false;
  if (!c) {
    r.why = "config is NULL (use SMD_GROUPS_CONFIG_INIT or smd_groups_config_init())";
  } else if (c->version < 1 || c->version > SMD_GROUPS_CONFIG_VERSION) {
    r.why = format("smd_groups_config_t.version %u is not supported (this smd knows 1..%d)",
                   c->version, SMD_GROUPS_CONFIG_VERSION);
  } else if (c->struct_size < config_size(c->version)) {
    r.why = format(
        "smd_groups_config_t.struct_size is %zu, expected %zu for version %u: fill the "
        "struct with SMD_GROUPS_CONFIG_INIT or smd_groups_config_init()",
        c->struct_size, config_size(c->version), c->version);
  } else {
    r.readable = true;
    r.tp = c->tp;
    r.pp = c->pp;
    r.sdp = c->version >= 2 ? c->sdp : 1;
    r.placement = c->placement ? c->placement : "cluster";
  }
  return r;
}

GroupLayout layout_of(const smd_groups_config_t *config, int world_size) {
  GroupsRequest r = read_config(config);
  if (!r.readable) fail(SMD_ERR_INVALID_ARGUMENT, "%s", r.why.c_str());
  return GroupLayout(world_size, r.tp, r.pp, r.placement.c_str(), r.sdp);
}

void copy_members(const std::vector<int> &members, int *ranks, int capacity, int *count) {
  require_out(count, "count");
  if (capacity < 0) fail(SMD_ERR_INVALID_ARGUMENT, "capacity %d is negative", capacity);
  if (capacity > 0 && !ranks)
    fail(SMD_ERR_INVALID_ARGUMENT, "ranks is NULL but capacity is %d", capacity);
  std::copy_n(members.begin(), std::min<size_t>(members.size(), static_cast<size_t>(capacity)),
              ranks);
  *count = static_cast<int>(members.size());
}

}  // namespace

extern "C" {

SMD_API smd_result_t smd_groups_config_init(smd_groups_config_t *config) {
  return init_config("smd_groups_config_init", config, smd_groups_config_t SMD_GROUPS_CONFIG_INIT);
}

SMD_API smd_result_t smd_groups_create(smd_comm_t *comm, const smd_groups_config_t *config,
                                       smd_groups_t **groups) {
  return guarded("smd_groups_create", [&] {
    if (groups) *groups = nullptr;
    auto parent = comm_of(comm);
    GroupsRequest request = read_config(config);
    if (!groups) {
      request.readable = false;
      request.why = "groups (the output pointer) is NULL";
    }
    auto made = on_parent(*parent, [&] { return create_groups(*parent, request); });
    auto handle = std::make_unique<smd_groups>();
    for (int k = 0; k < SMD_GROUP_KIND_COUNT; ++k) {
      handle->comms[k] = new_comm_handle(made->comms[k]);
      handle->comms[k]->owner = handle.get();
    }
    handle->impl = std::move(made);
    groups_registry().add(handle.get());
    *groups = handle.release();
  });
}

SMD_API smd_result_t smd_groups_destroy(smd_groups_t *groups) {
  return guarded("smd_groups_destroy", [&] {
    if (!groups) fail(SMD_ERR_INVALID_ARGUMENT, "groups is NULL");
    if (!groups_registry().remove(groups))
      fail(SMD_ERR_INVALID_USAGE, "groups %p is not live (destroyed twice?)",
           static_cast<void *>(groups));
    std::unique_ptr<smd_groups> owned(groups);
    for (smd_comm_t *c : owned->comms)
      if (comm_registry().remove(c)) release_comm_handle(c);
  });
}

SMD_API smd_result_t smd_groups_rank(const smd_groups_t *groups, smd_group_kind_t kind, int *rank) {
  return guarded("smd_groups_rank", [&] {
    require_out(rank, "rank");
    const RankGroups &g = groups_of(groups);
    check_group_kind(kind);
    *rank = g.layout.group_rank(g.rank, kind);
  });
}

SMD_API smd_result_t smd_groups_size(const smd_groups_t *groups, smd_group_kind_t kind, int *size) {
  return guarded("smd_groups_size", [&] {
    require_out(size, "size");
    const RankGroups &g = groups_of(groups);
    check_group_kind(kind);
    *size = g.layout.group_size(kind);
  });
}

SMD_API smd_result_t smd_groups_comm(const smd_groups_t *groups, smd_group_kind_t kind,
                                     smd_comm_t **comm) {
  return guarded("smd_groups_comm", [&] {
    require_out(comm, "comm");
    groups_of(groups);
    check_group_kind(kind);
    *comm = groups->comms[kind];
  });
}

SMD_API smd_result_t smd_groups_members(const smd_groups_t *groups, smd_group_kind_t kind,
                                        int *ranks, int capacity, int *count) {
  return guarded("smd_groups_members", [&] {
    const RankGroups &g = groups_of(groups);
    check_group_kind(kind);
    copy_members(g.layout.members(g.rank, kind), ranks, capacity, count);
  });
}

SMD_API smd_result_t smd_groups_layout(const smd_groups_config_t *config, int world_size, int rank,
                                       smd_group_kind_t kind, int *group_rank, int *ranks,
                                       int capacity, int *count) {
  return guarded("smd_groups_layout", [&] {
    require_out(group_rank, "group_rank");
    GroupLayout l = layout_of(config, world_size);
    if (rank < 0 || rank >= world_size)
      fail(SMD_ERR_INVALID_ARGUMENT, "rank %d is not in [0, %d)", rank, world_size);
    check_group_kind(kind);
    copy_members(l.members(rank, kind), ranks, capacity, count);
    *group_rank = l.group_rank(rank, kind);
  });
}

}  // extern "C"
