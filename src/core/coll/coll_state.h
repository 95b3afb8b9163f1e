// What the collective layer keeps per communicator, made at its first
// collective: the forced algorithms and the cost model (read once), the
// communicator's shape, a cache of recent choices (the choice is on every
// call's path: an 8-byte allreduce must not pay for the table walk), and
// the hierarchy of sub-communicators that hierarchical algorithms run on.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "core/coll/agree/agreement.h"
#include "core/coll/select/algo_config.h"
#include "core/coll/calibrate/calibration.h"
#include "core/coll/select/cost_model.h"
#include "core/coll/select/registry.h"
#include "core/coll/algorithms/blocks/stream_copy.h"
#include "core/comm/communicator.h"
#include "core/gpu/ipc_peers.h"

namespace smd {

struct Hierarchy;
struct CheckChannel;

struct CollState {
  bool ready = false;  // the fields below read (made at communicator creation, filled on first use)
  // The node's values, the same on every member (communicators with an
  // arena; calibration.h).
  std::optional<Calibration> calibration;
  AlgoConfig forced;
  CostModel model;
  CommShape shape;
  int64_t hier_chunk_bytes = 0;                 // SMD_HIER_CHUNK_BYTES
  CheckMode check = CheckMode::kFast;           // SMD_CHECK
  std::shared_ptr<CheckChannel> check_channel;  // call_check.cc, made on first use
  struct CachedChoice {
    int kind = -1;
    size_t bytes = 0;
    MemoryKind memory = MemoryKind::kHost;
    AlgoChoice choice;
  };
  std::array<CachedChoice, 64> cache{};
  std::unique_ptr<Hierarchy> hierarchy;      // made on first use (collective)
  std::unique_ptr<gpu::IpcPeers> ipc_peers;  // device_ipc.cc, made on first use
  // device_direct.cc: whether device calls run on the device buffers
  // (-1 until the first device call asks).
  int device_direct = -1;
  // Kept for the group-call layer above (fusion/group_run.cc): the
  // communicator's fusion buffer, released with it.
  std::shared_ptr<void> fusion_buffer;
  size_t fusion_buffer_bytes = 0;
  // Groups whose collectives ran on this communicator (group_agreement.h
  // names a mismatch's first differing call by it).
  uint64_t groups_run = 0;
  // The slow-transfer switch of this communicator's large allgathers.
  SlowTransferGuard slow_transfer;
  CollState();
  ~CollState();
};

// The communicator's state, made on first use (inline: on every call's path).
CollState &make_coll_state(Comm &c);
inline CollState &coll_state(Comm &c) {
  const std::shared_ptr<CollState> &st = c.coll_state();
  if (st && st->ready) return *st;
  return make_coll_state(c);
}

}  // namespace smd
