// The CUDA entry points smd uses, resolved at run time: libsmd never links
// CUDA, so one libsmd serves machines with and without it. The runtime
// (libcudart) is opened on first need; the driver (libcuda) only for the
// few calls the runtime lacks (address ranges, device names), and only if
// present. Nothing here includes a CUDA header: the types are CUDA's own
// ABI, spelled with plain C types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace smd::gpu {

using cuda_error_t = int;  // cudaError_t; 0 = cudaSuccess
using cuda_stream_t = void *;
using cuda_event_t = void *;

// cudaPointerAttributes (CUDA 11 and later), with room to spare.
struct CudaPointerAttributes {
  int type;  // cudaMemoryType: 0 unregistered, 1 host, 2 device, 3 managed
  int device;
  void *device_pointer;
  void *host_pointer;
  long reserved[16];
};

// cudaIpcMemHandle_t / cudaIpcEventHandle_t: 64 opaque bytes, by value.
struct CudaIpcHandle {
  char reserved[64];
};

// Values of CUDA's enums smd passes.
constexpr int kCudaMemcpyDefault = 4;
constexpr unsigned kCudaStreamNonBlocking = 1;
constexpr unsigned kCudaEventDisableTiming = 2;
constexpr unsigned kCudaIpcMemLazyEnablePeerAccess = 1;
constexpr int kCudaDevAttrMultiProcessorCount = 16;
constexpr unsigned kCudaHostAllocPortable = 1;
constexpr unsigned kCudaHostAllocMapped = 2;
constexpr cuda_error_t kCudaErrorNotReady = 600;
// CUstreamWaitValue_flags: CU_STREAM_WAIT_VALUE_GEQ, (int32_t)(*addr - value) >= 0.
constexpr unsigned kCuStreamWaitValueGeq = 0;
constexpr int kCuErrorNotSupported = 801;  // CUDA_ERROR_NOT_SUPPORTED

struct CudaApi {
  cuda_error_t (*GetDeviceCount)(int *count);
  const char *(*GetErrorString)(cuda_error_t error);
  cuda_error_t (*GetLastError)();
  cuda_error_t (*RuntimeGetVersion)(int *version);
  cuda_error_t (*DriverGetVersion)(int *version);
  cuda_error_t (*GetDevice)(int *device);
  cuda_error_t (*SetDevice)(int device);
  cuda_error_t (*DeviceGetPCIBusId)(char *id, int len, int device);
  cuda_error_t (*DeviceGetAttribute)(int *value, int attribute, int device);
  cuda_error_t (*PointerGetAttributes)(CudaPointerAttributes *attributes, const void *ptr);
  cuda_error_t (*StreamCreateWithFlags)(cuda_stream_t *stream, unsigned flags);
  cuda_error_t (*StreamDestroy)(cuda_stream_t stream);
  cuda_error_t (*StreamSynchronize)(cuda_stream_t stream);
  cuda_error_t (*StreamQuery)(cuda_stream_t stream);
  cuda_error_t (*StreamWaitEvent)(cuda_stream_t stream, cuda_event_t event, unsigned flags);
  cuda_error_t (*EventCreateWithFlags)(cuda_event_t *event, unsigned flags);
  cuda_error_t (*EventRecord)(cuda_event_t event, cuda_stream_t stream);
  cuda_error_t (*EventQuery)(cuda_event_t event);
  cuda_error_t (*EventSynchronize)(cuda_event_t event);
  cuda_error_t (*EventDestroy)(cuda_event_t event);
  cuda_error_t (*MemcpyAsync)(void *dst, const void *src, size_t bytes, int kind,
                              cuda_stream_t stream);
  cuda_error_t (*Malloc)(void **ptr, size_t bytes);
  cuda_error_t (*Free)(void *ptr);
  cuda_error_t (*MallocHost)(void **ptr, size_t bytes);
  cuda_error_t (*FreeHost)(void *ptr);
  cuda_error_t (*IpcGetMemHandle)(CudaIpcHandle *handle, void *ptr);
  cuda_error_t (*IpcOpenMemHandle)(void **ptr, CudaIpcHandle handle, unsigned flags);
  cuda_error_t (*IpcCloseMemHandle)(void *ptr);
  // Optional runtime entries (NULL when absent): the stream proxy's release
  // word (stream_proxy.cc) and its fallback without stream memory operations.
  cuda_error_t (*HostAlloc)(void **ptr, size_t bytes, unsigned flags) = nullptr;
  cuda_error_t (*HostGetDevicePointer)(void **device, void *host, unsigned flags) = nullptr;
  cuda_error_t (*LaunchHostFunc)(cuda_stream_t stream, void (*fn)(void *), void *arg) = nullptr;

  // Driver API, each NULL when libcuda lacks it (CUresult: 0 = success).
  int (*cuInit)(unsigned flags) = nullptr;
  int (*cuDeviceGet)(int *device, int ordinal) = nullptr;
  int (*cuDeviceGetName)(char *name, int len, int device) = nullptr;
  int (*cuDeviceTotalMem)(size_t *bytes, int device) = nullptr;
  int (*cuMemGetAddressRange)(uintptr_t *base, size_t *size, uintptr_t ptr) = nullptr;
  // cuStreamWaitValue32_v2: the stream waits until the 32-bit word at a
  // device address satisfies the condition (a stream memory operation).
  int (*cuStreamWaitValue32)(cuda_stream_t stream, uint64_t addr, uint32_t value,
                             unsigned flags) = nullptr;
};

// What loading found, for messages and smd-info.
struct CudaStatus {
  bool loaded = false;      // the runtime's entry points were all resolved
  int devices = 0;          // cudaGetDeviceCount, 0 on its failure
  int runtime_version = 0;  // e.g. 13000
  int driver_version = 0;   // 0 without a driver
  std::string library;      // the file opened
  std::string reason;       // why CUDA is unusable ("" when devices > 0)
  // The runtime opened is the host stand-in for CUDA (tests/gpu/cuda_standin),
  // whose "device" memory is host memory: every transport can read it.
  bool standin = false;
};

// Opens libcudart on the first call (SMD_CUDA_LIBRARY, else the usual
// sonames) and returns its entry points, or nullptr when it cannot be
// loaded. Thread-safe; never throws.
const CudaApi *cuda_api();
const CudaStatus &cuda_status();

// Whether this process uses CUDA, cheaply enough to ask on every call: with
// SMD_CUDA=auto, once the CUDA driver library is in the process (looked for
// again, at most once per coarse-clock tick, whenever the process has loaded
// another shared object) and the runtime finds a device; on: load at once; off: never. Host-only
// processes never load CUDA.
bool cuda_active();

// "cudaMemcpyAsync: invalid argument (1)".
std::string cuda_error_text(const char *call, cuda_error_t error);

// Throws SMD_ERR_SYSTEM naming the call and CUDA's explanation on failure.
void cuda_check(const char *call, cuda_error_t error);

}  // namespace smd::gpu
