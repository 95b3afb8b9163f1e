// Device-resident collectives of a node's ranks: allreduce, allgather,
// reduce_scatter, broadcast, reduce and alltoall (out of place) on device
// memory, reading the peers' buffers in place through CUDA IPC
// (gpu::IpcPeers, kept per communicator) instead of staging through host
// memory. The kernel module reduces straight from every rank's input;
// copies read the peers' inputs or outputs. The allreduce is one-shot when
// small and out of place on every rank (each rank reduces the whole
// vector), else reduce-scatter + allgather. A call whose buffers CUDA IPC
// cannot share (or an alltoall in place) is staged on every rank alike. On
// the thread's stream (the legacy default one, or the stream proxy's) and
// host-synchronous, with host barriers between the phases, as the staged
// route. Opt-in (SMD_GPU_IPC=1) until it has run on a GPU (docs/GPU.md).
#pragma once

#include "core/coll/collective.h"

namespace smd {

// Whether `a` takes this route: SMD_GPU_IPC=1, one of the collectives above
// on device memory, every member on one node. Every rank must answer alike:
// the route's own exchange is a collective that a rank on another route
// would not match (the call check then fails both).
bool device_ipc_applies(Comm &comm, const CollArgs &a);

void run_collective_ipc(Comm &comm, const CollArgs &a);

}  // namespace smd
