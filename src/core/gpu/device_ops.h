// Data movement on device memory, in the shape of the engine's MemoryOps
// (src/core/coll/memory_ops.h): copies through the copy engines, reductions
// through libsmd-gpu.so's kernels, scratch from cudaMalloc. Each call runs
// on the calling thread's current stream (StreamScope) and returns when the
// work is done, since the algorithm that called it goes on on the host.
// Failures throw: SMD_ERR_NOT_SUPPORTED without CUDA or the kernel module,
// SMD_ERR_SYSTEM with CUDA's explanation otherwise.
#pragma once

#include <smd.h>

#include <cstddef>

#include "core/util/non_copyable.h"

namespace smd::gpu {

// Sets the stream device operations of this thread enqueue on, for the
// life of the scope (NULL: the legacy default stream).
class StreamScope : NonCopyable {
 public:
  explicit StreamScope(void *stream);
  ~StreamScope();

 private:
  void *saved_;
};

void *current_stream();

// Makes `device` the calling thread's current GPU for the life of the
// scope (nothing when it is -1 or already current): a nonblocking call runs
// on the communicator's worker thread, whose current device is CUDA's 0.
class DeviceScope : NonCopyable {
 public:
  explicit DeviceScope(int device);
  ~DeviceScope();

 private:
  int previous_ = -1;
};

// Waits for the calling thread's stream (and so, on the legacy default
// stream, for the earlier work of the device's blocking streams).
void device_synchronize();

void device_copy(void *dst, const void *src, size_t bytes);
// Enqueued on the thread's stream only: the caller synchronizes (several
// copies then overlap instead of waiting one by one).
void device_copy_queued(void *dst, const void *src, size_t bytes);
void device_reduce(void *dst, const void *const *srcs, int nsrc, size_t count, smd_datatype_t dt,
                   smd_op_t op, int divisor);
void device_reduce2(void *dst, const void *a, const void *b, size_t count, smd_datatype_t dt,
                    smd_op_t op);
void device_divide(void *buf, size_t count, smd_datatype_t dt, int divisor);
// Scratch: blocks kept per GPU and reused, returned to CUDA at exit (never
// freed mid-life: cudaFree waits for the whole device).
void *device_alloc(size_t bytes);
void device_release(void *p);

}  // namespace smd::gpu
