// The host stand-in for CUDA (libsmd-cuda-standin.so), inside: what its
// memory, stream and entry-point files share. It exists so that smd's
// device code paths (classification, staging, stream ordering, IPC, the
// kernel table) run on machines without a GPU; it checks smd's logic, not
// CUDA's. Types are CUDA's C ABI spelled with plain C types, as smd's own
// src/core/gpu/cuda_api.h does, so the stand-in builds without the toolkit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace smd_standin {

// cudaError_t values the stand-in returns.
enum Error : int {
  kSuccess = 0,
  kInvalidValue = 1,
  kMemoryAllocation = 2,
  kNoDevice = 100,
  kInvalidDevice = 101,
  kDeviceUninitialized = 201,  // once cudaErrorInvalidContext
  kInvalidResourceHandle = 400,
  kNotReady = 600,
  kIllegalAddress = 700,
};

// cudaMemoryType.
enum MemoryType : int { kUnregistered = 0, kHost = 1, kDevice = 2, kManaged = 3 };

// Process-wide settings, read once from the environment.
int device_count();  // SMD_CUDA_STANDIN_DEVICES, default 1
int current_device();
void set_current_device(int device);

// Every entry point records its result for cudaGetLastError; returns it.
int result(int error);

// ---- memory (memory.cc) ----
struct Region {
  uintptr_t base = 0;
  size_t size = 0;
  int type = kUnregistered;  // MemoryType
  int device = -1;
  bool freed = false;  // a released device range (kept unreadable)
};
// The live allocation (or freed range) holding p, or a Region of type
// kUnregistered.
Region find_region(const void *p);
// Whether [p, p + bytes) is either unknown memory (plain host memory, which
// cannot be checked) or wholly inside one live region: kInvalidValue when
// it touches a freed range or runs past the end of an allocation.
int check_range(const void *p, size_t bytes);
// Whether the device can reach [p, p + bytes): inside a live device,
// managed or pinned region.
bool device_accessible(const void *p, size_t bytes);

int allocate(void **out, size_t bytes, int type);
int release(void *p, int type);

// ---- streams (streams.cc) ----
// A stream handle as the caller passed it (NULL and cudaStreamLegacy are
// the current device's legacy default stream); nullptr for an unknown one.
struct Stream;
Stream *resolve_stream(void *handle);
// Appends work to the stream's queue, after the implicit waits of the
// legacy default stream; the work returns a cudaError_t that, when not
// kSuccess, the next synchronisation of the stream reports.
void enqueue(Stream *s, std::function<int()> work);
// Waits until every operation enqueued on the stream so far has run;
// returns (and clears) an error a kernel ran into.
int synchronize(Stream *s);
// Waits for every stream of the device (cudaFree, cudaDeviceSynchronize).
void synchronize_device(int device);

}  // namespace smd_standin
