// A sharded parameter set (smd_sharded_t): parameters split into equal
// shards over a communicator, gathered into full buffers on request (with
// a bound on what is gathered at once and prefetch along the recorded
// order of use), and gradients reduce-scattered back into the shards.
// Every decision (what to gather, evict, prefetch) is taken on the
// caller's thread from the calls alone, so all ranks take the same ones
// and the gathers they queue stay collective. Not thread-safe beyond its
// own lock: the calls on one set come in one order on each rank.
#pragma once

#include <smd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <functional>
#include <mutex>
#include <vector>

#include "core/exec/executor.h"
#include "core/sharded/fetch_order.h"

namespace smd {

class Comm;

namespace sharded {

struct Config {
  uint64_t max_live = 1000000000;  // elements gathered at once
  uint64_t persistence_threshold = 1000000;
  uint64_t bucket = 500000000;  // elements per gradient reduce-scatter
  bool hierarchical = true;
  size_t prefetch_depth = 2;
  bool average = true;
  int wire = -1;                   // gradient wire type of float32 parameters; -1 = their own
  std::shared_ptr<Comm> replicas;  // may be null
};

// A parameter's storage on this rank.
struct Param {
  size_t count = 0;  // elements of the full parameter
  smd_datatype_t datatype = SMD_FLOAT32;
  size_t elem = 4;  // bytes per element
  bool persistent = false;
  size_t chunk = 0;                     // elements of each rank's shard (persistent: count)
  std::unique_ptr<char[]> shard, grad;  // chunk elements each, zero padding
  // The gathered parameter (chunk x size elements), or null; a queued
  // gather shares it, so an eviction never frees memory a gather writes.
  std::shared_ptr<char[]> full;
  std::shared_ptr<Task> gather;  // the queued gather filling `full`, if any
  int holds = 0;                 // fetches not yet released
  uint64_t released_at = 0;      // for least-recently-released eviction
  bool stale = false;            // gathered before the shards changed: dropped at release
  bool reduced = false;          // its gradient was reduced in this round
};

// The subject (CollArgs::subject) of a collective that carries these
// parameters' data: ranks that gather or reduce different parameters of
// the same size get SMD_ERR_MISMATCH from the call's own check instead of
// each other's data. `values`: the ids (and, for gradient buckets, the
// slices' bounds). Never 0.
uint32_t parameter_subject(const std::vector<uint64_t> &values);

// Every member's `value` compared on every member (digests_agree: one small
// allreduce; an allgather to name a differing rank when some differ), so a
// difference fails everywhere alike: SMD_ERR_MISMATCH naming `what`.
void agree(Comm &c, uint64_t value, const char *what);

class ShardedSet {
 public:
  // Collective over comm: the members' configurations must agree
  // (SMD_ERR_MISMATCH otherwise).
  ShardedSet(std::shared_ptr<Comm> comm, Config config);
  // Waits for the gathers it queued (their buffers and shards go with it).
  ~ShardedSet();
  ShardedSet(const ShardedSet &) = delete;
  ShardedSet &operator=(const ShardedSet &) = delete;

  int32_t add(size_t count, smd_datatype_t datatype, const void *init);
  const Param &param(int32_t id) const;  // SMD_ERR_INVALID_ARGUMENT for an unknown id
  size_t parameters() const;             // registered so far
  // This rank's first element of a parameter's shard in the full one.
  size_t shard_offset(int32_t id) const;

  // Gathers ids (collective). Blocking: returns null once gathered;
  // otherwise the task that completes when they are.
  std::shared_ptr<Task> fetch(const std::vector<int32_t> &ids, bool blocking);
  void *full(int32_t id) const;
  // Gathers ids straight into the caller's buffers dsts[i] (capacities[i]
  // elements of datatypes[i]), outside the set's buffers, bound and cache
  // (collective). A rank whose arguments are wrong still runs one gather
  // of a subject of its own, so its peers fail with SMD_ERR_MISMATCH
  // instead of waiting, then throws SMD_ERR_INVALID_ARGUMENT.
  std::shared_ptr<Task> fetch_into(const std::vector<int32_t> &ids,
                                   const std::vector<smd_datatype_t> &datatypes,
                                   const std::vector<void *> &dsts,
                                   const std::vector<size_t> &capacities, bool blocking);
  // Elements a buffer of fetch_into needs for a parameter: its shard
  // count times the group size (persistent: its count).
  size_t gathered_count(int32_t id) const;
  void release(const std::vector<int32_t> &ids);
  // Reduces the gradients of ids and ends the round.
  std::shared_ptr<Task> reduce_grads(const std::vector<int32_t> &ids,
                                     const std::vector<const void *> &grads, bool blocking);
  // Reduces the gradients of ids within the round (one unit's, while the
  // backward of the others goes on); the round goes on.
  std::shared_ptr<Task> reduce_grads_part(const std::vector<int32_t> &ids,
                                          const std::vector<const void *> &grads, bool blocking);
  double clip_grads(double max_norm);
  void stats(smd_sharded_stats_t *out) const;

  Comm &comm() const { return *comm_; }
  const std::shared_ptr<Comm> &comm_ptr() const { return comm_; }

 private:
  void check_ids(const std::vector<int32_t> &ids, const char *what) const;
  void check_registration();
  // Room for `need` more gathered elements, evicting the least recently
  // released buffers not in `keep`; false (nothing evicted) if even all of
  // them would not make room.
  bool make_room(uint64_t need, const std::vector<int32_t> &keep);
  void drop_full(Param &p);
  std::shared_ptr<char[]> start_full(Param &p);
  void prefetch(const std::vector<int32_t> &ids);
  // Queues the reduction of ids' gradients (each at most once per round).
  std::shared_ptr<Task> queue_reduction(const std::vector<int32_t> &ids,
                                        const std::vector<const void *> &grads, bool blocking,
                                        const char *what);
  void run(std::function<void()> work, bool blocking, std::shared_ptr<Task> *task);

  std::shared_ptr<Comm> comm_;
  Config cfg_;
  std::vector<Param> params_;
  FetchOrder order_;
  bool registration_checked_ = false;
  uint64_t release_clock_ = 0;
  uint64_t live_elements_ = 0, live_bytes_ = 0;
  smd_sharded_stats_t stats_{};
  std::vector<std::shared_ptr<Task>> queued_;  // unfinished work of this set
  mutable std::mutex mu_;
};

}  // namespace sharded
}  // namespace smd
