#include "core/coll/collective.h"

#include <optional>

#include "core/coll/agree/agreement.h"
#include "core/coll/algorithms/algorithms.h"
#include "core/coll/agree/call_check.h"
#include "core/coll/coll_state.h"
#include "core/coll/algorithms/device_direct.h"
#include "core/coll/algorithms/device_ipc.h"
#include "core/coll/algorithms/device_staging.h"
#include "core/coll/create/hierarchy.h"
#include "core/coll/select/registry.h"
#include "core/coll/coll_util.h"
#include "core/coll/flight_scope.h"
#include "core/comm/communicator.h"
#include "core/reduce/reduce.h"
#include "core/util/error.h"
#include "core/util/log.h"
#include "core/util/params.h"

namespace smd {

namespace {

// One rank: every collective is a copy (and AVG divides by one).
void run_single(Comm &comm, const CollArgs &a) {
  size_t bytes = a.count * datatype_size(a.datatype);
  switch (a.kind) {
    case CollKind::kBarrier: return;
    case CollKind::kReduce:
    case CollKind::kBroadcast:
    case CollKind::kAllreduce:
    case CollKind::kAllgather:
    case CollKind::kReduceScatter:
    case CollKind::kAlltoall:
      if (a.recvbuf) ops_of(a).copy(a.recvbuf, a.sendbuf, bytes);
      return;
    case CollKind::kAllgatherv:
      ops_of(a).copy(at(a.recvbuf, a.blocks->displs[0], datatype_size(a.datatype)), a.sendbuf,
                     bytes);
      return;
    case CollKind::kReduceScatterv:
      ops_of(a).copy(a.recvbuf, at(a.sendbuf, a.blocks->displs[0], datatype_size(a.datatype)),
                     bytes);
      return;
    case CollKind::kAlltoallv: return alltoallv_pairwise(comm, a);  // checks and copies its block
    default: return;
  }
}

// The choice for this call, through the communicator's cache: the same
// (collective, bytes, memory kind) gets the same answer without walking
// the table.
const AlgoChoice &cached_choice(Comm &c, const CollArgs &a) {
  CollState &st = coll_state(c);
  size_t bytes = a.count * datatype_size(a.datatype);
  size_t slot = (bytes * 0x9E3779B97F4A7C15ull >> 58) ^ static_cast<size_t>(a.kind);
  CollState::CachedChoice &e = st.cache[slot % st.cache.size()];
  if (e.kind != static_cast<int>(a.kind) || e.bytes != bytes || e.memory != a.memory) {
    e.choice = choose(a, st.forced.get(a.kind), st.shape, st.model, &c);
    e.kind = static_cast<int>(a.kind);
    e.bytes = bytes;
    e.memory = a.memory;
  }
  return e.choice;
}

}  // namespace

CollState::CollState() = default;
CollState::~CollState() = default;

CollState &make_coll_state(Comm &c) {
  if (!c.coll_state()) c.set_coll_state(std::make_shared<CollState>());
  CollState *st = c.coll_state().get();
  if (!st->ready) {
    st->forced = AlgoConfig::parse(c.ctx().algo_spec());
    // The link between nodes as the world measured it, on a communicator
    // that spans nodes (the same on every rank of the world).
    Context::MeasuredLink link = c.ctx().network_link();
    LinkCost net{link.alpha_us, link.gbps};
    bool use_net =
        link.gbps > 0 && c.placement().node_count > 1 && calibrate_mode() != CalibrateMode::kOff;
    st->model =
        CostModel::load(st->calibration ? &*st->calibration : nullptr, use_net ? &net : nullptr);
    st->shape = shape_of(c);
    st->hier_chunk_bytes = param_int("SMD_HIER_CHUNK_BYTES");
    st->check = check_mode();
    if (st->hier_chunk_bytes < 0)
      fail(SMD_ERR_INVALID_ARGUMENT, "SMD_HIER_CHUNK_BYTES must be 0 or more, not %lld",
           static_cast<long long>(st->hier_chunk_bytes));
    st->ready = true;
  }
  return *st;
}

namespace {

void run_chosen(Comm &c, const CollArgs &a, FlightScope &flight) {
  AlgoChoice asked;
  if (a.algo != Algo::kAuto) {
    CollState &st = coll_state(c);
    asked = choose(a, a.algo, st.shape, st.model, &c);
  }
  const AlgoChoice &choice = a.algo != Algo::kAuto ? asked : cached_choice(c, a);
  const AlgoEntry &algo = *choice.entry;
  SMD_TRACE("coll", "%s %s count=%zu %s on %s", coll_name(a.kind), algo.name, a.count,
            datatype_name(a.datatype), c.where().c_str());
  c.note_collective(algo.name, choice.cost_us);
  try {
    // Self-checked algorithms (the arena's) compare the members' descriptors;
    // a phase of a hierarchical collective was checked as a whole. Counts
    // that differ between ranks would let a v-collective's messages still
    // fit and deliver wrong blocks: with the check off those still get the
    // full round (its fingerprint carries the counts' digest).
    if (algo.self_checked || a.agreed) return algo.run(c, a);
    CheckMode mode = coll_state(c).check;
    if (mode == CheckMode::kFull || (mode == CheckMode::kOff && per_rank_blocks(a.kind)))
      agree_on_call(c, a);
    if (mode == CheckMode::kOff) return algo.run(c, a);
    CallCheck check(c, a);
    try {
      algo.run(c, a);
      check.finish();
    } catch (const Error &e) {
      throw check.failed(e);
    }
  } catch (const Error &e) {
    // A collective that failed half-way leaves peers at unknown steps:
    // nothing later on this communicator could be trusted, here or there.
    Error cause = c.settle_failure(e);
    flight.failed(cause.code());
    if (cause.message() == e.message()) throw;
    throw cause;
  }
}

}  // namespace

void run_collective(Comm &c, const CollArgs &a) {
  c.check_usable();
  // Device calls run on the device buffers where the transports move device
  // memory (SMD_GPU_DIRECT), read the node's peers in place with
  // SMD_GPU_IPC=1 (allreduce, allgather, reduce_scatter, broadcast,
  // reduce, alltoall), and otherwise stage through pinned host memory (docs/GPU.md).
  std::optional<DirectCallScope> direct;
  if (a.memory == MemoryKind::kDevice) {
    if (device_ipc_applies(c, a)) return run_collective_ipc(c, a);
    if (!device_direct_applies(c)) return run_collective_staged(c, a);
    // A rank passing host memory to this call would choose among the
    // host-only algorithms too: an internal barrier first, which no call
    // with buffers matches, makes that SMD_ERR_MISMATCH on every rank.
    run_collective(c, internal_call(CollKind::kBarrier, nullptr, nullptr, 0, SMD_UINT8));
    try {
      direct.emplace(a);
    } catch (const Error &e) {
      rethrow_settled(c, e);
    }
  }
  FlightScope flight(c, a);
  if (c.size() == 1) {
    c.note_collective("single", 0);
    run_single(c, a);
  } else {
    run_chosen(c, a, flight);
  }
  flight.done();
}

}  // namespace smd
