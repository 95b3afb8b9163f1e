// Communicator entry points: init, split, dup, create_group, destroy,
// abort, queries.
#include <smd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/api/guard.h"
#include "core/api/handles.h"
#include "core/api/on_parent.h"
#include "core/api/validate.h"
#include "core/coll/create/comm_create.h"
#include "core/comm/communicator.h"

using namespace smd;

namespace {
// This communicator's counters plus those of its sub-communicators.
void add_stats(Comm &c, smd_comm_stats_t &out) {
  const TrafficCounters &t = c.traffic();
  auto get = [](const std::atomic<uint64_t> &v) { return v.load(std::memory_order_relaxed); };
  out.inter_node_bytes_sent += get(t.inter_node_sent);
  out.inter_node_bytes_received += get(t.inter_node_received);
  out.intra_node_bytes_sent += get(t.intra_node_sent);
  out.intra_node_bytes_received += get(t.intra_node_received);
  const std::vector<Transport *> &ts = c.ctx().transports();
  for (size_t i = 0; i < ts.size() && i < SMD_STATS_MAX_TRANSPORTS; ++i) {
    out.transports[i].bytes_sent += get(t.sent[i]);
    out.transports[i].bytes_received += get(t.received[i]);
  }
  for (const auto &child : c.children()) add_stats(*child, out);
}
}  // namespace

extern "C" {

SMD_API smd_result_t smd_comm_init(const smd_init_options_t *options, smd_comm_t **world) {
  return guarded("smd_comm_init", [&] {
    require_out(world, "world");
    *world = nullptr;
    *world = new_comm_handle(create_world(options));
  });
}

SMD_API smd_result_t smd_comm_split(smd_comm_t *comm, int color, int key, smd_comm_t **newcomm) {
  return guarded("smd_comm_split", [&] {
    require_out(newcomm, "newcomm");
    *newcomm = nullptr;
    auto parent = comm_of(comm);
    if (color < 0 && color != SMD_UNDEFINED)
      fail(SMD_ERR_INVALID_ARGUMENT, "color %d is negative (use SMD_UNDEFINED to opt out)", color);
    auto made = on_parent(*parent, [&] { return split_comm(*parent, color, key); });
    if (made) *newcomm = new_comm_handle(std::move(made));
  });
}

SMD_API smd_result_t smd_comm_dup(smd_comm_t *comm, smd_comm_t **newcomm) {
  return guarded("smd_comm_dup", [&] {
    require_out(newcomm, "newcomm");
    *newcomm = nullptr;
    auto parent = comm_of(comm);
    auto made = on_parent(*parent, [&] { return split_comm(*parent, 0, parent->rank()); });
    *newcomm = new_comm_handle(std::move(made));
  });
}

SMD_API smd_result_t smd_comm_create_group(smd_comm_t *comm, const int *ranks, int nranks,
                                           smd_comm_t **newcomm) {
  return guarded("smd_comm_create_group", [&] {
    require_out(newcomm, "newcomm");
    *newcomm = nullptr;
    auto parent = comm_of(comm);
    if (!ranks) fail(SMD_ERR_INVALID_ARGUMENT, "ranks is NULL");
    if (nranks < 1 || nranks > parent->size())
      fail(SMD_ERR_INVALID_ARGUMENT, "nranks %d is not in [1, %d]", nranks, parent->size());
    std::vector<int> seen(ranks, ranks + nranks);
    std::sort(seen.begin(), seen.end());
    for (int i = 0; i < nranks; ++i) {
      if (seen[i] < 0 || seen[i] >= parent->size())
        fail(SMD_ERR_INVALID_ARGUMENT, "rank %d is not a rank of the communicator (size %d)",
             seen[i], parent->size());
      if (i && seen[i] == seen[i - 1])
        fail(SMD_ERR_INVALID_ARGUMENT, "rank %d is listed twice", seen[i]);
    }
    if (!std::binary_search(seen.begin(), seen.end(), parent->rank()))
      fail(SMD_ERR_INVALID_ARGUMENT,
           "the calling rank %d is not in the list: only listed ranks call smd_comm_create_group",
           parent->rank());
    parent->check_usable();
    *newcomm = new_comm_handle(create_group_comm(*parent, ranks, nranks));
  });
}

SMD_API smd_result_t smd_comm_destroy(smd_comm_t *comm) {
  return guarded("smd_comm_destroy", [&] {
    if (!comm) fail(SMD_ERR_INVALID_ARGUMENT, "comm is NULL");
    if (comm_registry().contains(comm) && comm->owner)
      fail(SMD_ERR_INVALID_USAGE,
           "comm %p belongs to an smd_groups_t: smd_groups_destroy() releases it",
           static_cast<void *>(comm));
    if (!comm_registry().remove(comm))
      fail(SMD_ERR_INVALID_USAGE, "comm %p is not a live communicator (destroyed twice?)",
           static_cast<void *>(comm));
    release_comm_handle(comm);
  });
}

SMD_API smd_result_t smd_comm_abort(smd_comm_t *comm) {
  return guarded("smd_comm_abort", [&] {
    auto c = comm_of(comm);
    c->abort_local();
    c->ctx().announce_abort(c->abort_key());
  });
}

SMD_API smd_result_t smd_comm_get_async_error(smd_comm_t *comm, smd_result_t *error) {
  return guarded("smd_comm_get_async_error", [&] {
    require_out(error, "error");
    auto c = comm_of(comm);
    *error = c->revoked() ? SMD_ERR_REVOKED : c->aborted() ? SMD_ERR_ABORTED : c->async_error();
  });
}

SMD_API smd_result_t smd_comm_get_stats(const smd_comm_t *comm, smd_comm_stats_t *stats) {
  return guarded("smd_comm_get_stats", [&] {
    require_out(stats, "stats");
    if (stats->struct_size < sizeof(size_t) + sizeof(uint64_t))
      fail(SMD_ERR_INVALID_ARGUMENT,
           "stats->struct_size is %zu: set it to sizeof(smd_comm_stats_t)", stats->struct_size);
    auto c = comm_of(comm);
    smd_comm_stats_t s;
    memset(&s, 0, sizeof s);
    s.collectives = c->traffic().collectives.load(std::memory_order_relaxed);
    snprintf(s.last_algorithm, sizeof s.last_algorithm, "%s", c->last_algorithm());
    s.last_predicted_us = c->last_predicted_us();
    const std::vector<Transport *> &ts = c->ctx().transports();
    s.transport_count = static_cast<int>(std::min<size_t>(ts.size(), SMD_STATS_MAX_TRANSPORTS));
    for (int i = 0; i < s.transport_count; ++i)
      snprintf(s.transports[i].name, sizeof s.transports[i].name, "%s",
               ts[size_t(i)]->name().c_str());
    add_stats(*c, s);
    size_t n = std::min(stats->struct_size, sizeof s);
    s.struct_size = stats->struct_size;
    memcpy(stats, &s, n);
  });
}

#define SMD_QUERY(fn, expr)                                   \
  SMD_API smd_result_t fn(const smd_comm_t *comm, int *out) { \
    return guarded(#fn, [&] {                                 \
      require_out(out, "output pointer");                     \
      auto c = comm_of(comm);                                 \
      *out = (expr);                                          \
    });                                                       \
  }

SMD_QUERY(smd_comm_rank, c->rank())
SMD_QUERY(smd_comm_size, c->size())
SMD_QUERY(smd_comm_local_rank, c->placement().local_rank)
SMD_QUERY(smd_comm_local_size, c->placement().local_size)
SMD_QUERY(smd_comm_node_index, c->placement().node_index)
SMD_QUERY(smd_comm_node_count, c->placement().node_count)
#undef SMD_QUERY

SMD_API smd_result_t smd_comm_world_rank(const smd_comm_t *comm, int rank, int *world_rank) {
  return guarded("smd_comm_world_rank", [&] {
    require_out(world_rank, "world_rank");
    auto c = comm_of(comm);
    if (rank < 0 || rank >= c->size())
      fail(SMD_ERR_INVALID_ARGUMENT, "rank %d is not in [0, %d)", rank, c->size());
    *world_rank = c->world_rank(rank);
  });
}

}  // extern "C"
