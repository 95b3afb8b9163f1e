// The first device-resident collective: the allreduce of a node's ranks on
// device memory, reading the peers' buffers in place through CUDA IPC
// (gpu::IpcPeers, kept per communicator) instead of staging through host
// memory. Each rank reduces its share of the vector from every rank's input
// with the kernel module, then copies the other shares from their owners'
// outputs. On the legacy default stream and host-synchronous, with host
// barriers between the phases, as the staged route. Opt-in (SMD_GPU_IPC=1)
// until it has run on a GPU (docs/GPU.md).
#pragma once

#include "core/coll/collective.h"

namespace smd {

// Whether `a` takes this route: SMD_GPU_IPC=1, an allreduce on device
// memory, every member on one node. Every rank must answer alike: the
// route's own exchange is a collective that a rank on another route would
// not match (the call check then fails both).
bool device_ipc_applies(Comm &comm, const CollArgs &a);

void run_allreduce_ipc(Comm &comm, const CollArgs &a);

}  // namespace smd
