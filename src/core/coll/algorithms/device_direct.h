// The direct route for device collectives: the engine's algorithms run on
// the device buffers themselves, moving data with the device MemoryOps
// (copies by the copy engines, reductions by libsmd-gpu.so's kernels) and
// handing device pointers to the transports, which must move device memory
// themselves (SMD_TRANSPORT_CAP_DEVICE_MEMORY: UCX built with CUDA). The
// registry leaves out the host-only rows (the arena's). Where it does not
// apply, device calls stage through pinned host memory (device_staging.h).
// SMD_GPU_DIRECT: auto (when every transport declares device memory), on,
// off. docs/GPU.md.
#pragma once

#include <string>

#include "core/coll/collective.h"
#include "core/gpu/device_ops.h"

namespace smd {

// SMD_GPU_DIRECT as the settings check compares it between ranks ("auto",
// "on", "off"; a bad value is SMD_ERR_INVALID_ARGUMENT). Opens no CUDA.
std::string device_direct_setting();

// Whether this rank's transports all move device memory (a world of one
// process has none that does). The settings check ANDs it over the world
// into Context::device_memory_everywhere(): ranks whose nodes load other
// transports (a rank alone on its node has no shm) must still take one
// route, or they would choose different algorithms.
bool transports_move_device_memory(Comm &world);

// Whether device calls on `comm` take the direct route. Under `on`, a
// transport that does not declare device memory is SMD_ERR_NOT_SUPPORTED
// naming it, unless the runtime is the host stand-in for CUDA (its device
// memory is host memory, which every transport reads).
bool device_direct_applies(Comm &comm);

// For the length of a direct call: the buffers' GPU current, and the
// calling thread's stream drained first, so the inputs are complete (the
// legacy default stream waits for the device's blocking streams).
class DirectCallScope {
 public:
  explicit DirectCallScope(const CollArgs &a);
  DirectCallScope(const DirectCallScope &) = delete;
  DirectCallScope &operator=(const DirectCallScope &) = delete;

 private:
  gpu::DeviceScope on_device_;
};

}  // namespace smd
