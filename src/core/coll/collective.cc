#include "core/coll/collective.h"

#include "core/coll/algorithms.h"
#include "core/coll/coll_util.h"
#include "core/comm/communicator.h"
#include "core/reduce/reduce.h"
#include "core/util/error.h"
#include "core/util/log.h"

namespace smd {

namespace {

bool is_pow2(int p) { return (p & (p - 1)) == 0; }

// The choice when nothing is forced: the arena whenever the members share
// a node (no messages at all); otherwise by message size, as the
// alpha-beta costs of docs/PERFORMANCE.md suggest.
Algo auto_algo(Comm &c, const CollArgs &a) {
  if (c.arena()) return Algo::kDirect;
  size_t bytes = a.count * datatype_size(a.datatype);
  int p = c.size();
  switch (a.kind) {
    case CollKind::kAllreduce: return bytes <= 64 * 1024 ? Algo::kRd : Algo::kRing;
    case CollKind::kAllgather:
      return is_pow2(p) && bytes * p <= 256 * 1024 ? Algo::kRd : Algo::kRing;
    case CollKind::kReduceScatter:
      return is_pow2(p) && bytes * p <= 256 * 1024 ? Algo::kRd : Algo::kRing;
    case CollKind::kBroadcast: return bytes <= 256 * 1024 ? Algo::kTree : Algo::kRing;
    case CollKind::kReduce: return bytes <= 256 * 1024 ? Algo::kTree : Algo::kRing;
    case CollKind::kAlltoall: return Algo::kPairwise;
    case CollKind::kBarrier: return Algo::kRd;
    default: return Algo::kRing;
  }
}

// One rank: every collective is a copy (and AVG divides by one).
void run_single(const CollArgs &a) {
  size_t bytes = a.count * datatype_size(a.datatype);
  switch (a.kind) {
    case CollKind::kBarrier: return;
    case CollKind::kReduce:
    case CollKind::kBroadcast:
    case CollKind::kAllreduce:
    case CollKind::kAllgather:
    case CollKind::kReduceScatter:
    case CollKind::kAlltoall:
      if (a.recvbuf) copy_bytes(a.recvbuf, a.sendbuf, bytes);
      return;
    default: return;
  }
}

using AlgoFn = void (*)(Comm &, const CollArgs &);

AlgoFn lookup(CollKind k, Algo a) {
  switch (k) {
    case CollKind::kAllreduce:
      return a == Algo::kDirect ? allreduce_direct : a == Algo::kRd ? allreduce_rd : allreduce_ring;
    case CollKind::kAllgather:
      return a == Algo::kDirect ? allgather_direct : a == Algo::kRd ? allgather_rd : allgather_ring;
    case CollKind::kReduceScatter:
      return a == Algo::kDirect ? reduce_scatter_direct
             : a == Algo::kRd   ? reduce_scatter_rd
                                : reduce_scatter_ring;
    case CollKind::kBroadcast:
      return a == Algo::kDirect ? broadcast_direct : a == Algo::kTree ? broadcast_tree : broadcast_ring;
    case CollKind::kReduce:
      return a == Algo::kDirect ? reduce_direct : a == Algo::kTree ? reduce_tree : reduce_ring;
    case CollKind::kAlltoall: return a == Algo::kDirect ? alltoall_direct : alltoall_pairwise;
    case CollKind::kBarrier: return a == Algo::kDirect ? barrier_direct : barrier_rd;
    default: return nullptr;
  }
}

}  // namespace

Algo choose_algo(Comm &c, const CollArgs &a) {
  Algo forced = c.ctx().algo_config().get(a.kind);
  if (forced == Algo::kDirect && !c.arena()) forced = Algo::kAuto;  // needs shared memory
  return forced != Algo::kAuto ? forced : auto_algo(c, a);
}

void run_collective(Comm &c, const CollArgs &a) {
  c.check_usable();
  if (c.size() == 1) return run_single(a);
  Algo algo = choose_algo(c, a);
  SMD_TRACE("coll", "%s %s count=%zu %s on %s", coll_name(a.kind), algo_name(algo), a.count,
            datatype_name(a.datatype), c.where().c_str());
  try {
    lookup(a.kind, algo)(c, a);
  } catch (const Error &e) {
    // A collective that failed half-way leaves peers at unknown steps:
    // nothing later on this communicator could be trusted.
    c.poison(e.code(), e.message());
    throw;
  }
}

}  // namespace smd
