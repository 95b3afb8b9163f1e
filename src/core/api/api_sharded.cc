// Sharded parameter set entry points (smd_sharded_*): argument checks and
// handles; the set itself is src/core/sharded.
#include <smd.h>

#include <memory>
#include <string>
#include <vector>

#include "core/api/group_calls.h"
#include "core/api/config_init.h"
#include "core/api/guard.h"
#include "core/api/handles.h"
#include "core/api/validate.h"
#include "core/sharded/sharded_set.h"
#include "core/util/dtype.h"

struct smd_sharded {
  std::unique_ptr<smd::sharded::ShardedSet> impl;
};

using namespace smd;

namespace {

Registry<smd_sharded> &sharded_registry() {
  static Registry<smd_sharded> r;
  return r;
}

sharded::ShardedSet &set_of(const smd_sharded_t *set) {
  if (!set) fail(SMD_ERR_INVALID_ARGUMENT, "set is NULL");
  if (!sharded_registry().contains(set))
    fail(SMD_ERR_INVALID_USAGE, "set %p is not a live sharded set (destroyed, or never created)",
         static_cast<const void *>(set));
  return *set->impl;
}

// The caller's configuration, checked; an empty `why` when it is usable.
sharded::Config read_config(const smd_sharded_config_t *c, std::string *why) {
  sharded::Config cfg;
  if (!c) return cfg;
  if (c->struct_size < sizeof(smd_sharded_config_t)) {
    *why = format(
        "smd_sharded_config_t.struct_size is %zu, expected %zu: fill the struct with "
        "SMD_SHARDED_CONFIG_INIT or smd_sharded_config_init()",
        c->struct_size, sizeof(smd_sharded_config_t));
  } else if (c->version < 1 || c->version > SMD_SHARDED_CONFIG_VERSION) {
    *why = format("smd_sharded_config_t.version %u is not supported (this smd knows 1..%d)",
                  c->version, SMD_SHARDED_CONFIG_VERSION);
  } else if (c->max_live_parameters == 0) {
    *why = "max_live_parameters is 0 (at least 1 element must be gatherable)";
  } else if (c->reduce_bucket_size == 0) {
    *why = "reduce_bucket_size is 0 (at least 1 element per bucket)";
  } else if (c->hierarchical_allgather != 0 && c->hierarchical_allgather != 1) {
    *why = format("hierarchical_allgather is %d (0 or 1)", c->hierarchical_allgather);
  } else if (c->prefetch_depth < 0 || c->prefetch_depth > 1024) {
    *why = format("prefetch_depth is %d (0 to 1024)", c->prefetch_depth);
  } else if (c->average_gradients != 0 && c->average_gradients != 1) {
    *why = format("average_gradients is %d (0 or 1)", c->average_gradients);
  } else if (c->gradient_wire_dtype != -1 && c->gradient_wire_dtype != SMD_FLOAT16 &&
             c->gradient_wire_dtype != SMD_BFLOAT16 && c->gradient_wire_dtype != SMD_FLOAT32) {
    *why = format("gradient_wire_dtype is %d (-1, SMD_FLOAT16, SMD_BFLOAT16 or SMD_FLOAT32)",
                  c->gradient_wire_dtype);
  } else {
    cfg.max_live = c->max_live_parameters;
    cfg.persistence_threshold = c->param_persistence_threshold;
    cfg.bucket = c->reduce_bucket_size;
    cfg.hierarchical = c->hierarchical_allgather == 1;
    cfg.prefetch_depth = static_cast<size_t>(c->prefetch_depth);
    cfg.average = c->average_gradients == 1;
    cfg.wire = c->gradient_wire_dtype;
    if (c->replica_comm) cfg.replicas = comm_of(c->replica_comm);
  }
  return cfg;
}

// Sharded calls communicate at once: they cannot be queued in a group.
void not_in_group(const char *what) {
  if (group_open())
    fail(SMD_ERR_INVALID_USAGE, "%s cannot be called between smd_group_start and smd_group_end",
         what);
}

// The caller's ids; `distinct` calls name each parameter at most once, so
// n above the registered count is a wrong n, refused before ids is read.
std::vector<int32_t> id_vector(const sharded::ShardedSet &s, const int32_t *ids, size_t n,
                               bool distinct) {
  if (n > 0 && !ids) fail(SMD_ERR_INVALID_ARGUMENT, "ids is NULL but n is %zu", n);
  size_t registered = s.parameters();
  if (distinct && n > registered)
    fail(SMD_ERR_INVALID_ARGUMENT,
         "n is %zu but the set has %zu parameters (each id appears at most once)", n, registered);
  if (n > PTRDIFF_MAX / sizeof(int32_t))
    fail(SMD_ERR_INVALID_ARGUMENT, "n is %zu, more ids than memory can hold", n);
  return std::vector<int32_t>(ids, ids + n);
}

smd_request_t *new_request(const std::shared_ptr<Comm> &c, std::shared_ptr<Task> task,
                           const char *op) {
  auto *r = new smd_request();
  r->comm = c;
  r->task = std::move(task);
  r->op = op;
  request_registry().add(r);
  return r;
}

// smd_sharded_reduce_grads (ends_round) and smd_sharded_reduce_grads_part:
// the same arguments, checked alike.
void reduce_call(smd_sharded_t *set, const int32_t *ids, size_t n, const void *const *grads,
                 smd_stream_t stream, smd_request_t **request, const char *what, bool ends_round) {
  if (request) *request = nullptr;
  not_in_group(what);
  auto &s = set_of(set);
  check_stream(stream);
  auto idv = id_vector(s, ids, n, true);
  if (n > 0 && !grads) fail(SMD_ERR_INVALID_ARGUMENT, "grads is NULL but n is %zu", n);
  std::vector<const void *> gv(grads, grads + n);
  for (size_t i = 0; i < n; ++i)
    if (!gv[i]) fail(SMD_ERR_INVALID_ARGUMENT, "grads[%zu] (parameter %d) is NULL", i, idv[i]);
  auto task = ends_round ? s.reduce_grads(idv, gv, request == nullptr)
                         : s.reduce_grads_part(idv, gv, request == nullptr);
  if (request)
    *request = new_request(s.comm_ptr(), std::move(task),
                           ends_round ? "sharded reduce_grads" : "sharded reduce_grads_part");
}

}  // namespace

extern "C" {

SMD_API smd_result_t smd_sharded_config_init(smd_sharded_config_t *config) {
  return init_config("smd_sharded_config_init", config,
                     smd_sharded_config_t SMD_SHARDED_CONFIG_INIT);
}

SMD_API smd_result_t smd_sharded_create(smd_comm_t *comm, const smd_sharded_config_t *config,
                                        smd_sharded_t **set) {
  return guarded("smd_sharded_create", [&] {
    require_out(set, "set");
    *set = nullptr;
    not_in_group("smd_sharded_create");
    auto c = comm_of(comm);
    std::string why;
    sharded::Config cfg = read_config(config, &why);
    if (!why.empty()) {
      // Still take part in the agreement, so the peers fail instead of waiting.
      sharded::agree(*c, 0, "sharded set configurations");
      fail(SMD_ERR_INVALID_ARGUMENT, "%s", why.c_str());
    }
    auto *h = new smd_sharded();
    try {
      h->impl = std::make_unique<sharded::ShardedSet>(c, std::move(cfg));
    } catch (...) {
      delete h;
      throw;
    }
    sharded_registry().add(h);
    *set = h;
  });
}

SMD_API smd_result_t smd_sharded_destroy(smd_sharded_t *set) {
  return guarded("smd_sharded_destroy", [&] {
    if (!set) return;
    if (!sharded_registry().remove(set))
      fail(SMD_ERR_INVALID_USAGE, "set %p is not a live sharded set (destroyed twice?)",
           static_cast<const void *>(set));
    delete set;
  });
}

SMD_API smd_result_t smd_sharded_register(smd_sharded_t *set, size_t count, smd_datatype_t datatype,
                                          const void *init, int32_t *id) {
  return guarded("smd_sharded_register", [&] {
    require_out(id, "id");
    *id = -1;
    auto &s = set_of(set);
    if (!valid_datatype(datatype))
      fail(SMD_ERR_INVALID_ARGUMENT, "datatype %d is not an smd_datatype_t",
           static_cast<int>(datatype));
    *id = s.add(count, datatype, init);
  });
}

SMD_API smd_result_t smd_sharded_shard(smd_sharded_t *set, int32_t id, void **data, size_t *count,
                                       size_t *offset, int *persistent) {
  return guarded("smd_sharded_shard", [&] {
    require_out(data, "data");
    auto &s = set_of(set);
    const sharded::Param &p = s.param(id);
    *data = p.shard.get();
    if (count) *count = p.chunk;
    if (offset) *offset = s.shard_offset(id);
    if (persistent) *persistent = p.persistent ? 1 : 0;
  });
}

SMD_API smd_result_t smd_sharded_grad(smd_sharded_t *set, int32_t id, void **data, size_t *count) {
  return guarded("smd_sharded_grad", [&] {
    require_out(data, "data");
    auto &s = set_of(set);
    const sharded::Param &p = s.param(id);
    *data = p.grad.get();
    if (count) *count = p.chunk;
  });
}

SMD_API smd_result_t smd_sharded_fetch(smd_sharded_t *set, const int32_t *ids, size_t n,
                                       smd_stream_t stream, smd_request_t **request) {
  return guarded("smd_sharded_fetch", [&] {
    if (request) *request = nullptr;
    not_in_group("smd_sharded_fetch");
    auto &s = set_of(set);
    check_stream(stream);
    auto task = s.fetch(id_vector(s, ids, n, true), request == nullptr);
    if (request) *request = new_request(s.comm_ptr(), std::move(task), "sharded fetch");
  });
}

SMD_API smd_result_t smd_sharded_full(smd_sharded_t *set, int32_t id, void **data) {
  return guarded("smd_sharded_full", [&] {
    require_out(data, "data");
    *data = nullptr;
    *data = set_of(set).full(id);
  });
}

SMD_API smd_result_t smd_sharded_release(smd_sharded_t *set, const int32_t *ids, size_t n) {
  return guarded("smd_sharded_release", [&] {
    auto &s = set_of(set);
    s.release(id_vector(s, ids, n, false));
  });
}

SMD_API smd_result_t smd_sharded_reduce_grads(smd_sharded_t *set, const int32_t *ids, size_t n,
                                              const void *const *grads, smd_stream_t stream,
                                              smd_request_t **request) {
  return guarded("smd_sharded_reduce_grads", [&] {
    reduce_call(set, ids, n, grads, stream, request, "smd_sharded_reduce_grads", true);
  });
}

SMD_API smd_result_t smd_sharded_reduce_grads_part(smd_sharded_t *set, const int32_t *ids, size_t n,
                                                   const void *const *grads, smd_stream_t stream,
                                                   smd_request_t **request) {
  return guarded("smd_sharded_reduce_grads_part", [&] {
    reduce_call(set, ids, n, grads, stream, request, "smd_sharded_reduce_grads_part", false);
  });
}

SMD_API smd_result_t smd_sharded_fetch_into(smd_sharded_t *set, const int32_t *ids, size_t n,
                                            const smd_datatype_t *datatypes, void *const *dsts,
                                            const size_t *capacities, smd_stream_t stream,
                                            smd_request_t **request) {
  return guarded("smd_sharded_fetch_into", [&] {
    if (request) *request = nullptr;
    not_in_group("smd_sharded_fetch_into");
    auto &s = set_of(set);
    check_stream(stream);
    auto idv = id_vector(s, ids, n, true);
    if (n > 0 && (!datatypes || !dsts || !capacities))
      fail(SMD_ERR_INVALID_ARGUMENT, "%s is NULL but n is %zu",
           !datatypes ? "datatypes"
           : !dsts    ? "dsts"
                      : "capacities",
           n);
    std::vector<smd_datatype_t> types(datatypes, datatypes + n);
    std::vector<void *> into(dsts, dsts + n);
    std::vector<size_t> caps(capacities, capacities + n);
    auto task = s.fetch_into(idv, types, into, caps, request == nullptr);
    if (request) *request = new_request(s.comm_ptr(), std::move(task), "sharded fetch_into");
  });
}

SMD_API smd_result_t smd_sharded_gathered_count(smd_sharded_t *set, int32_t id, size_t *count) {
  return guarded("smd_sharded_gathered_count", [&] {
    require_out(count, "count");
    *count = 0;
    *count = set_of(set).gathered_count(id);
  });
}

SMD_API smd_result_t smd_sharded_clip_grads(smd_sharded_t *set, double max_norm,
                                            double *total_norm) {
  return guarded("smd_sharded_clip_grads", [&] {
    not_in_group("smd_sharded_clip_grads");
    double norm = set_of(set).clip_grads(max_norm);
    if (total_norm) *total_norm = norm;
  });
}

SMD_API smd_result_t smd_sharded_get_stats(const smd_sharded_t *set, smd_sharded_stats_t *stats) {
  return guarded("smd_sharded_get_stats", [&] {
    require_out(stats, "stats");
    check_versioned("smd_sharded_stats_t", stats->struct_size, stats->version,
                    sizeof(smd_sharded_stats_t), 1, SMD_SHARDED_STATS_VERSION,
                    "set struct_size to sizeof(smd_sharded_stats_t) and version to "
                    "SMD_SHARDED_STATS_VERSION");
    set_of(set).stats(stats);
  });
}

}  // extern "C"
