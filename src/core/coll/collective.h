// A collective call as the algorithms see it, and the one entry point that
// picks an algorithm and runs it on the calling thread.
#pragma once

#include <smd.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/coll/select/algo_config.h"
#include "core/coll/block_layout.h"
#include "core/coll/memory_ops.h"

namespace smd {

class Comm;

struct CollArgs {
  CollKind kind = CollKind::kBarrier;
  const void *sendbuf = nullptr;
  void *recvbuf = nullptr;
  // allreduce/broadcast/reduce: elements of the vector; allgather: sent
  // per rank; reduce_scatter: received per rank; alltoall: per peer block;
  // v-collectives: the sum of all blocks (alltoallv: of the received ones).
  size_t count = 0;
  smd_datatype_t datatype = SMD_FLOAT32;
  smd_op_t op = SMD_SUM;
  // broadcast/reduce: the root; v-collectives: blocks->digest, so that the
  // descriptors and fingerprints that compare roots compare the counts.
  int root = 0;
  MemoryKind memory = MemoryKind::kHost;  // of sendbuf and recvbuf
  // The members already agreed on this call (a phase of a hierarchical
  // collective, checked as a whole): no agreement check of its own.
  bool agreed = false;
  // A call smd makes itself while a communicator is created (the settings
  // check, the staging probe): kept out of the flight recorder and the
  // trace, which show the application's calls.
  bool unrecorded = false;
  // An algorithm this call asks for (kAuto: the communicator's choice,
  // SMD_ALGO included); used where it applies, like SMD_ALGO's.
  Algo algo = Algo::kAuto;
  // v-collectives: every rank's block (alltoallv: in recvbuf).
  std::shared_ptr<const BlockLayout> blocks = nullptr;
  // alltoallv: the blocks of sendbuf, send_blocks->counts[r] going to rank r.
  std::shared_ptr<const BlockLayout> send_blocks = nullptr;
  // What the call stands for beyond its own arguments, which every member
  // must agree on too (0: nothing, a plain call): inside a group, the
  // digest of the group's calls on this communicator (their number, order
  // and arguments), which a fused allreduce's packed total cannot show; a
  // sharded set's gather or gradient bucket, the parameters it carries.
  // Fingerprints and arena descriptors compare it.
  uint32_t subject = 0;
};

// A call smd makes itself (kept out of the flight recorder and the trace).
inline CollArgs internal_call(CollKind kind, const void *sendbuf, void *recvbuf, size_t count,
                              smd_datatype_t datatype, smd_op_t op = SMD_SUM) {
  CollArgs a;
  a.kind = kind;
  a.sendbuf = sendbuf;
  a.recvbuf = recvbuf;
  a.count = count;
  a.datatype = datatype;
  a.op = op;
  a.unrecorded = true;
  return a;
}

// The data movement of the call's memory kind.
// allgatherv, reduce_scatterv: the calls with per-rank blocks that every
// rank must agree on. (alltoallv's counts differ between ranks by design:
// its pairs check their sizes as they exchange, see alltoallv.cc.)
inline bool per_rank_blocks(CollKind k) {
  return k == CollKind::kAllgatherv || k == CollKind::kReduceScatterv;
}

inline const MemoryOps &ops_of(const CollArgs &a) { return memory_ops(a.memory); }

// Runs the collective on this thread (the executor decides which thread).
// Throws smd::Error.
void run_collective(Comm &comm, const CollArgs &args);

}  // namespace smd
