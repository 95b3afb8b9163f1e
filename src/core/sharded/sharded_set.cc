#include "core/sharded/sharded_set.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <string>

#include "core/coll/agree/digest_agreement.h"
#include "core/coll/coll_state.h"
#include "core/coll/collective.h"
#include "core/comm/communicator.h"
#include "core/sharded/float_elements.h"
#include "core/sharded/grad_reduce.h"
#include "core/util/dtype.h"
#include "core/util/error.h"
#include "core/util/fnv1a.h"

namespace smd::sharded {

namespace {

void throw_if_failed(const std::shared_ptr<Task> &t) {
  if (!t) return;
  t->wait_until(Deadline::never());
  if (t->result() != SMD_SUCCESS) throw Error(t->result(), t->error());
}

std::string id_list(const std::vector<int32_t> &ids) {
  std::string s;
  for (size_t i = 0; i < ids.size() && i < 8; ++i) s += (i ? ", " : "") + std::to_string(ids[i]);
  if (ids.size() > 8) s += ", ...";
  return "[" + s + "]";
}

}  // namespace

uint32_t parameter_subject(const std::vector<uint64_t> &values) {
  Fnv1a64 h;
  for (uint64_t v : values) h.mix_u64(v);
  uint32_t s = h.folded32();
  return s ? s : 1;
}

void agree(Comm &c, uint64_t value, const char *what) {
  std::span<const uint64_t> digest(&value, 1);
  std::vector<uint64_t> all;
  c.executor().run_blocking([&] {
    if (!digests_agree(c, digest, DigestExchange::kChecked))
      all = every_members_digests(c, digest, DigestExchange::kChecked);
  });
  for (size_t r = 0; r < all.size(); ++r)
    if (all[r] != all[0])
      fail(SMD_ERR_MISMATCH, "%s differ between the ranks of the shard group (rank 0 and rank %zu)",
           what, r);
}

ShardedSet::ShardedSet(std::shared_ptr<Comm> comm, Config config)
    : comm_(std::move(comm)), cfg_(std::move(config)) {
  stats_.last_grad_norm = -1;
  Fnv1a64 h;
  for (uint64_t v :
       {cfg_.max_live, cfg_.persistence_threshold, cfg_.bucket, uint64_t(cfg_.hierarchical),
        uint64_t(cfg_.prefetch_depth), uint64_t(cfg_.average), uint64_t(int64_t(cfg_.wire)),
        uint64_t(cfg_.replicas ? cfg_.replicas->size() : 0)})
    h.mix_u64(v);
  agree(*comm_, h.value(), "sharded set configurations");
}

ShardedSet::~ShardedSet() {
  for (auto &t : queued_) t->wait_until(Deadline::never());
}

int32_t ShardedSet::add(size_t count, smd_datatype_t datatype, const void *init) {
  std::lock_guard<std::mutex> lock(mu_);
  if (registration_checked_)
    fail(SMD_ERR_INVALID_USAGE, "parameters are registered before the first fetch or reduce_grads");
  if (!is_float_type(datatype))
    fail(SMD_ERR_INVALID_ARGUMENT,
         "datatype %s is not a floating type (float16, bfloat16, float32, float64)",
         datatype_name(datatype));
  if (count == 0) fail(SMD_ERR_INVALID_ARGUMENT, "count is 0");
  if (params_.size() >= size_t(INT32_MAX)) fail(SMD_ERR_INVALID_ARGUMENT, "too many parameters");
  Param p;
  p.count = count;
  p.datatype = datatype;
  p.elem = datatype_size(datatype);
  p.persistent = count < cfg_.persistence_threshold;
  size_t ranks = static_cast<size_t>(comm_->size());
  // count / ranks rounded up without count + ranks - 1, which wraps near
  // SIZE_MAX; the gathered buffer (chunk x ranks elements) must be
  // addressable, or no allocation could ever hold it.
  p.chunk = p.persistent ? count : count / ranks + (count % ranks != 0);
  size_t gathered_max = size_t(PTRDIFF_MAX) / p.elem / (p.persistent ? 1 : ranks);
  if (p.chunk > gathered_max)
    fail(SMD_ERR_INVALID_ARGUMENT,
         "count %zu is too large: its %s would need more than %zu bytes (at most %zu elements of "
         "%zu bytes on %zu ranks)",
         count, p.persistent ? "buffer" : "gathered buffer", size_t(PTRDIFF_MAX),
         gathered_max * (p.persistent ? 1 : ranks), p.elem, ranks);
  p.shard = std::make_unique<char[]>(p.chunk * p.elem);
  p.grad = std::make_unique<char[]>(p.chunk * p.elem);
  if (init) {
    size_t first = p.persistent ? 0 : static_cast<size_t>(comm_->rank()) * p.chunk;
    size_t n = first < count ? std::min(p.chunk, count - first) : 0;
    if (n) std::memcpy(p.shard.get(), static_cast<const char *>(init) + first * p.elem, n * p.elem);
  }
  if (p.persistent) stats_.persistent_elements += count;
  else stats_.owned_elements += p.chunk;
  stats_.parameters++;
  params_.push_back(std::move(p));
  return static_cast<int32_t>(params_.size() - 1);
}

const Param &ShardedSet::param(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= params_.size())
    fail(SMD_ERR_INVALID_ARGUMENT, "unknown parameter id %d (%zu registered)", id, params_.size());
  return params_[static_cast<size_t>(id)];
}

size_t ShardedSet::parameters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return params_.size();
}

size_t ShardedSet::shard_offset(int32_t id) const {
  const Param &p = param(id);
  return p.persistent ? 0 : static_cast<size_t>(comm_->rank()) * p.chunk;
}

void ShardedSet::check_ids(const std::vector<int32_t> &ids, const char *what) const {
  for (size_t i = 0; i < ids.size(); ++i) {
    param(ids[i]);
    for (size_t j = 0; j < i; ++j)
      if (ids[j] == ids[i])
        fail(SMD_ERR_INVALID_ARGUMENT, "parameter %d appears twice in one %s", ids[i], what);
  }
}

void ShardedSet::check_registration() {
  if (registration_checked_) return;
  Fnv1a64 h;
  h.mix_u64(params_.size());
  for (const Param &p : params_) h.mix_u64(p.count).mix_u64(static_cast<uint64_t>(p.datatype));
  agree(*comm_, h.value(), "registered parameters (counts or datatypes)");
  registration_checked_ = true;
}

void ShardedSet::drop_full(Param &p) {
  if (!p.full) return;
  p.full.reset();
  p.gather.reset();
  p.stale = false;
  live_elements_ -= p.count;
  live_bytes_ -= p.chunk * p.elem * static_cast<size_t>(comm_->size());
}

std::shared_ptr<char[]> ShardedSet::start_full(Param &p) {
  size_t bytes = p.chunk * p.elem * static_cast<size_t>(comm_->size());
  p.full = std::shared_ptr<char[]>(new char[bytes]);
  p.stale = false;
  live_elements_ += p.count;
  live_bytes_ += bytes;
  stats_.peak_live_elements = std::max(stats_.peak_live_elements, live_elements_);
  stats_.peak_live_bytes = std::max(stats_.peak_live_bytes, live_bytes_);
  stats_.bytes_fetched += bytes - p.chunk * p.elem;
  return p.full;
}

bool ShardedSet::make_room(uint64_t need, const std::vector<int32_t> &keep) {
  if (live_elements_ + need <= cfg_.max_live) return true;
  std::vector<size_t> candidates;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Param &p = params_[i];
    if (p.full && p.holds == 0 && std::find(keep.begin(), keep.end(), int32_t(i)) == keep.end())
      candidates.push_back(i);
  }
  std::sort(candidates.begin(), candidates.end(),
            [&](size_t a, size_t b) { return params_[a].released_at < params_[b].released_at; });
  uint64_t freeable = 0;
  size_t used = 0;
  while (used < candidates.size() && live_elements_ - freeable + need > cfg_.max_live)
    freeable += params_[candidates[used++]].count;
  if (live_elements_ - freeable + need > cfg_.max_live) return false;
  for (size_t k = 0; k < used; ++k) {
    drop_full(params_[candidates[k]]);
    stats_.evictions++;
  }
  return true;
}

void ShardedSet::run(std::function<void()> work, bool blocking, std::shared_ptr<Task> *task) {
  if (blocking) {
    comm_->executor().run_blocking(work);
    return;
  }
  *task = comm_->executor().submit(std::move(work));
  queued_.erase(std::remove_if(queued_.begin(), queued_.end(),
                               [](const std::shared_ptr<Task> &t) { return t->done(); }),
                queued_.end());
  queued_.push_back(*task);
}

namespace {

struct Gather {
  const void *shard;
  std::shared_ptr<char[]> full;  // the set's buffer; null when gathering into `into`
  size_t chunk;
  smd_datatype_t datatype;
  int32_t id;
  void *into = nullptr;  // the caller's buffer (fetch_into)
  uint32_t subject = 0;  // 0: the parameter's own
};

void run_gathers(Comm &c, const std::vector<Gather> &gathers, bool flat) {
  for (const Gather &g : gathers) {
    void *dst = g.into ? g.into : g.full.get();
    CollArgs a{CollKind::kAllgather, g.shard, dst, g.chunk, g.datatype, SMD_SUM, 0};
    a.subject = g.subject ? g.subject : parameter_subject({static_cast<uint64_t>(g.id)});
    if (flat) a.algo = Algo::kRing;
    run_collective(c, a);
  }
}

}  // namespace

std::shared_ptr<Task> ShardedSet::fetch(const std::vector<int32_t> &ids, bool blocking) {
  std::lock_guard<std::mutex> lock(mu_);
  check_ids(ids, "fetch");
  comm_->check_usable();
  for (int32_t id : ids)
    if (params_[size_t(id)].stale)
      fail(
          SMD_ERR_INVALID_USAGE,
          "parameter %d is still held from before reduce_grads (its shard may have changed since): "
          "release it before fetching it again",
          id);
  check_registration();
  uint64_t need = 0, together = 0;
  for (int32_t id : ids) {
    const Param &p = params_[size_t(id)];
    if (p.persistent) continue;
    together += p.count;
    if (!p.full) need += p.count;
  }
  if (together > cfg_.max_live)
    fail(SMD_ERR_NO_MEMORY,
         "fetching parameters %s needs %llu gathered elements at once, more than "
         "max_live_parameters (%llu)",
         id_list(ids).c_str(), static_cast<unsigned long long>(together),
         static_cast<unsigned long long>(cfg_.max_live));
  if (!make_room(need, ids)) {
    uint64_t held = 0;
    for (const Param &p : params_)
      if (p.full && p.holds > 0) held += p.count;
    fail(SMD_ERR_NO_MEMORY,
         "fetching parameters %s needs %llu more gathered elements, but %llu of the %llu allowed "
         "(max_live_parameters) are held: release some first",
         id_list(ids).c_str(), static_cast<unsigned long long>(need),
         static_cast<unsigned long long>(held), static_cast<unsigned long long>(cfg_.max_live));
  }
  bool flat = !cfg_.hierarchical && coll_state(*comm_).shape.nodes > 1;
  std::vector<Gather> gathers;
  std::vector<std::shared_ptr<Task>> waits;
  std::vector<int32_t> started;
  bool stalled = false;
  for (int32_t id : ids) {
    Param &p = params_[size_t(id)];
    p.holds++;
    if (p.persistent) continue;
    stats_.fetches++;
    if (p.full) {
      stats_.cache_hits++;
      if (p.gather && !p.gather->done()) stalled = true;
      if (p.gather) waits.push_back(p.gather);
      continue;
    }
    stalled = true;
    started.push_back(id);
    gathers.push_back(Gather{p.shard.get(), start_full(p), p.chunk, p.datatype, id});
  }
  if (stalled) stats_.fetch_stalls++;
  Comm *c = comm_.get();
  auto work = [c, gathers, waits, flat] {
    for (const auto &w : waits) throw_if_failed(w);
    run_gathers(*c, gathers, flat);
  };
  std::shared_ptr<Task> task;
  try {
    run(work, blocking, &task);
  } catch (...) {
    for (int32_t id : ids) params_[size_t(id)].holds--;
    for (int32_t id : started) drop_full(params_[size_t(id)]);
    throw;
  }
  for (int32_t id : ids) {
    Param &p = params_[size_t(id)];
    if (!p.persistent) p.gather = task;
  }
  prefetch(ids);
  return task;
}

void ShardedSet::prefetch(const std::vector<int32_t> &ids) {
  std::vector<int32_t> ahead = order_.on_fetch(ids, cfg_.prefetch_depth);
  bool flat = !cfg_.hierarchical && coll_state(*comm_).shape.nodes > 1;
  std::vector<int32_t> keep = ahead;
  keep.insert(keep.end(), ids.begin(), ids.end());
  for (int32_t id : ahead) {
    Param &p = params_[size_t(id)];
    if (p.persistent || p.full) continue;
    if (!make_room(p.count, keep)) break;
    std::vector<Gather> one{Gather{p.shard.get(), start_full(p), p.chunk, p.datatype, id}};
    p.released_at = ++release_clock_;  // prefetched and unused: evictable like a released one
    Comm *c = comm_.get();
    std::shared_ptr<Task> task;
    run([c, one, flat] { run_gathers(*c, one, flat); }, false, &task);
    p.gather = task;
    stats_.prefetches++;
  }
}

size_t ShardedSet::gathered_count(int32_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Param &p = param(id);
  return p.persistent ? p.count : p.chunk * static_cast<size_t>(comm_->size());
}

std::shared_ptr<Task> ShardedSet::fetch_into(const std::vector<int32_t> &ids,
                                             const std::vector<smd_datatype_t> &datatypes,
                                             const std::vector<void *> &dsts,
                                             const std::vector<size_t> &capacities, bool blocking) {
  std::lock_guard<std::mutex> lock(mu_);
  comm_->check_usable();
  // The first problem with this rank's arguments; the peers cannot see it,
  // so it is raised only after the mismatching gather below.
  std::string why;
  bool gathers_any = false;
  for (size_t i = 0; i < ids.size() && why.empty(); ++i) {
    int32_t id = ids[i];
    if (id < 0 || static_cast<size_t>(id) >= params_.size()) {
      why = format("unknown parameter id %d (%zu registered)", id, params_.size());
      gathers_any = true;
      break;
    }
    const Param &p = params_[size_t(id)];
    gathers_any |= !p.persistent;
    size_t need = p.persistent ? p.count : p.chunk * static_cast<size_t>(comm_->size());
    if (std::find(ids.begin(), ids.begin() + long(i), id) != ids.begin() + long(i))
      why = format("parameter %d appears twice in one fetch_into", id);
    else if (!dsts[i]) why = format("dsts[%zu] (parameter %d) is NULL", i, id);
    else if (datatypes[i] != p.datatype)
      why = format("dsts[%zu] holds %s but parameter %d is %s", i, datatype_name(datatypes[i]), id,
                   datatype_name(p.datatype));
    else if (capacities[i] < need)
      why = format("dsts[%zu] holds %zu elements but parameter %d needs %zu (its %zu elements%s)",
                   i, capacities[i], id, need, p.count,
                   p.persistent ? "" : " padded to a multiple of the group size");
  }
  for (size_t i = 0; i < ids.size() && !gathers_any; ++i)
    gathers_any = ids[i] >= 0 && static_cast<size_t>(ids[i]) < params_.size() &&
                  !params_[size_t(ids[i])].persistent;
  check_registration();
  bool flat = !cfg_.hierarchical && coll_state(*comm_).shape.nodes > 1;
  if (!why.empty()) {
    if (gathers_any) {
      // One byte under a subject no parameter has: the peers' gather of
      // the same call fails its check (SMD_ERR_MISMATCH) on every rank.
      auto scratch = std::shared_ptr<char[]>(new char[static_cast<size_t>(comm_->size())]);
      char one = 0;
      Gather bad{&one, scratch, 1, SMD_UINT8, -1};
      bad.subject = parameter_subject({~uint64_t(0), ids.size()});
      try {
        comm_->executor().run_blocking([&] { run_gathers(*comm_, {bad}, flat); });
      } catch (const Error &) {
        // The peers' mismatch; this rank's own reason is the one to report.
      }
    }
    fail(SMD_ERR_INVALID_ARGUMENT, "fetch_into: %s", why.c_str());
  }
  std::vector<Gather> gathers;
  std::vector<std::shared_ptr<Task>> waits;
  for (size_t i = 0; i < ids.size(); ++i) {
    Param &p = params_[size_t(ids[i])];
    if (p.persistent) {
      std::memcpy(dsts[i], p.shard.get(), p.count * p.elem);
      continue;
    }
    stats_.fetches++;
    stats_.bytes_fetched += p.chunk * p.elem * (static_cast<size_t>(comm_->size()) - 1);
    Gather g{p.shard.get(), nullptr, p.chunk, p.datatype, ids[i]};
    g.into = dsts[i];
    gathers.push_back(g);
  }
  Comm *c = comm_.get();
  std::shared_ptr<Task> task;
  run([c, gathers, flat] { run_gathers(*c, gathers, flat); }, blocking, &task);
  return task;
}

void *ShardedSet::full(int32_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Param &p = param(id);
  if (p.holds == 0)
    fail(SMD_ERR_INVALID_USAGE,
         "parameter %d is not fetched (fetch it before asking for its full buffer)", id);
  return p.persistent ? p.shard.get() : p.full.get();
}

void ShardedSet::release(const std::vector<int32_t> &ids) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < ids.size(); ++i) {
    const Param &p = param(ids[i]);
    int times = static_cast<int>(std::count(ids.begin(), ids.begin() + long(i) + 1, ids[i]));
    if (p.holds < times)
      fail(SMD_ERR_INVALID_USAGE, "parameter %d is released more often than it was fetched",
           ids[i]);
  }
  for (int32_t id : ids) {
    Param &p = params_[size_t(id)];
    if (--p.holds > 0 || p.persistent) continue;
    p.released_at = ++release_clock_;
    if (p.stale) drop_full(p);
  }
}

std::shared_ptr<Task> ShardedSet::queue_reduction(const std::vector<int32_t> &ids,
                                                  const std::vector<const void *> &grads,
                                                  bool blocking, const char *what) {
  check_ids(ids, what);
  for (int32_t id : ids)
    if (params_[size_t(id)].reduced)
      fail(SMD_ERR_INVALID_USAGE,
           "the gradient of parameter %d was already reduced in this round (each gradient is "
           "reduced "
           "once between two smd_sharded_reduce_grads: the second would overwrite the first)",
           id);
  check_registration();
  auto targets = std::make_shared<std::vector<GradTarget>>();
  for (size_t i = 0; i < ids.size(); ++i) {
    Param &p = params_[size_t(ids[i])];
    targets->push_back(
        GradTarget{grads[i], p.grad.get(), p.count, p.chunk, p.datatype, p.persistent, ids[i]});
  }
  auto buckets = std::make_shared<std::vector<GradBucket>>(plan_buckets(*targets, cfg_));
  Comm *c = comm_.get();
  Config cfg = cfg_;
  std::shared_ptr<Task> task;
  run(
      [c, targets, buckets, cfg] {
        for (const GradBucket &b : *buckets) reduce_bucket(*c, *targets, b, cfg);
      },
      blocking, &task);
  for (int32_t id : ids) params_[size_t(id)].reduced = true;
  return task;
}

std::shared_ptr<Task> ShardedSet::reduce_grads_part(const std::vector<int32_t> &ids,
                                                    const std::vector<const void *> &grads,
                                                    bool blocking) {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_reduction(ids, grads, blocking, "reduce_grads_part");
}

std::shared_ptr<Task> ShardedSet::reduce_grads(const std::vector<int32_t> &ids,
                                               const std::vector<const void *> &grads,
                                               bool blocking) {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<Task> task = queue_reduction(ids, grads, blocking, "reduce_grads");
  // The round ends: an optimizer step is expected to change the shards, so
  // what was gathered from them goes (held buffers at their release).
  order_.on_round_end();
  for (Param &p : params_) {
    p.reduced = false;
    if (!p.full) continue;
    if (p.holds == 0) drop_full(p);
    else p.stale = true;
  }
  return task;
}

double ShardedSet::clip_grads(double max_norm) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!(max_norm >= 0) || std::isinf(max_norm))
    fail(SMD_ERR_INVALID_ARGUMENT, "max_norm %g is not a finite number >= 0", max_norm);
  check_registration();
  // Behind the queued reductions: the gradients they write are summed here.
  double norm = 0;
  comm_->executor().run_blocking([&] {
    double partial = 0;
    int me = comm_->rank();
    for (const Param &p : params_) {
      if (p.persistent) {
        if (me == 0) partial += sum_of_squares(p.grad.get(), p.datatype, p.count);
        continue;
      }
      size_t first = static_cast<size_t>(me) * p.chunk;
      size_t n = first < p.count ? std::min(p.chunk, p.count - first) : 0;
      partial += sum_of_squares(p.grad.get(), p.datatype, n);
    }
    double total = 0;
    CollArgs a{CollKind::kAllreduce, &partial, &total, 1, SMD_FLOAT64, SMD_SUM, 0};
    run_collective(*comm_, a);
    norm = std::sqrt(total);
  });
  // torch.nn.utils.clip_grad_norm_'s rule, its small guard included.
  if (max_norm > 0 && norm > max_norm) {
    double scale = max_norm / (norm + 1e-6);
    for (Param &p : params_)
      convert_scaled(p.grad.get(), p.datatype, p.grad.get(), p.datatype, p.chunk, scale);
  }
  stats_.last_grad_norm = norm;
  return norm;
}

void ShardedSet::stats(smd_sharded_stats_t *out) const {
  std::lock_guard<std::mutex> lock(mu_);
  smd_sharded_stats_t s = stats_;
  s.live_elements = live_elements_;
  s.live_bytes = live_bytes_;
  s.struct_size = out->struct_size;
  s.version = out->version;
  *out = s;
}

}  // namespace smd::sharded
