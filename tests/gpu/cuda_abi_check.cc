// smd's spelling of CUDA's ABI (src/core/gpu/cuda_api.h: plain C types, so
// libsmd builds without the toolkit) and the host stand-in's error numbers,
// checked against the toolkit's own headers at compile time: every entry
// point smd resolves has the arity and argument sizes CUDA declares, the
// structures the same layout, the enum values the same numbers. Built only
// where meson finds the toolkit; it links nothing of CUDA, and running it
// only says that it compiled.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdio>
#include <type_traits>

#include "core/gpu/cuda_api.h"
#include "cuda_standin/standin.h"

namespace {

template <class T>
constexpr size_t size_of() {
  if constexpr (std::is_void_v<T>) return 0;
  else return sizeof(T);
}

// A function pointer type's result and argument sizes.
template <class F>
struct Sig;
template <class R, class... A>
struct Sig<R (*)(A...)> {
  static constexpr std::array<size_t, sizeof...(A) + 1> sizes{size_of<R>(), sizeof(A)...};
};

using smd::gpu::CudaApi;
#define SAME_SHAPE(field, fn)                                                      \
  static_assert(Sig<decltype(CudaApi::field)>::sizes == Sig<decltype(&fn)>::sizes, \
                "CudaApi::" #field " does not match " #fn "'s declaration")

SAME_SHAPE(GetDeviceCount, cudaGetDeviceCount);
SAME_SHAPE(GetErrorString, cudaGetErrorString);
SAME_SHAPE(GetLastError, cudaGetLastError);
SAME_SHAPE(RuntimeGetVersion, cudaRuntimeGetVersion);
SAME_SHAPE(DriverGetVersion, cudaDriverGetVersion);
SAME_SHAPE(GetDevice, cudaGetDevice);
SAME_SHAPE(SetDevice, cudaSetDevice);
SAME_SHAPE(DeviceGetPCIBusId, cudaDeviceGetPCIBusId);
SAME_SHAPE(DeviceGetAttribute, cudaDeviceGetAttribute);
SAME_SHAPE(PointerGetAttributes, cudaPointerGetAttributes);
SAME_SHAPE(StreamCreateWithFlags, cudaStreamCreateWithFlags);
SAME_SHAPE(StreamDestroy, cudaStreamDestroy);
SAME_SHAPE(StreamSynchronize, cudaStreamSynchronize);
SAME_SHAPE(StreamQuery, cudaStreamQuery);
SAME_SHAPE(StreamWaitEvent, cudaStreamWaitEvent);
SAME_SHAPE(EventCreateWithFlags, cudaEventCreateWithFlags);
SAME_SHAPE(EventRecord, cudaEventRecord);
SAME_SHAPE(EventQuery, cudaEventQuery);
SAME_SHAPE(EventSynchronize, cudaEventSynchronize);
SAME_SHAPE(EventDestroy, cudaEventDestroy);
SAME_SHAPE(MemcpyAsync, cudaMemcpyAsync);
SAME_SHAPE(Malloc, cudaMalloc);
SAME_SHAPE(Free, cudaFree);
SAME_SHAPE(MallocHost, cudaMallocHost);
SAME_SHAPE(FreeHost, cudaFreeHost);
SAME_SHAPE(IpcGetMemHandle, cudaIpcGetMemHandle);
SAME_SHAPE(IpcOpenMemHandle, cudaIpcOpenMemHandle);
SAME_SHAPE(IpcCloseMemHandle, cudaIpcCloseMemHandle);
SAME_SHAPE(HostAlloc, cudaHostAlloc);
SAME_SHAPE(HostGetDevicePointer, cudaHostGetDevicePointer);
SAME_SHAPE(LaunchHostFunc, cudaLaunchHostFunc);
// The driver's, by the names smd asks dlsym for.
SAME_SHAPE(cuInit, cuInit);
SAME_SHAPE(cuDeviceGet, cuDeviceGet);
SAME_SHAPE(cuDeviceGetName, cuDeviceGetName);
SAME_SHAPE(cuDeviceTotalMem, cuDeviceTotalMem_v2);
SAME_SHAPE(cuMemGetAddressRange, cuMemGetAddressRange_v2);
SAME_SHAPE(cuStreamWaitValue32, cuStreamWaitValue32_v2);

using smd::gpu::CudaPointerAttributes;
static_assert(offsetof(CudaPointerAttributes, type) == offsetof(cudaPointerAttributes, type));
static_assert(offsetof(CudaPointerAttributes, device) == offsetof(cudaPointerAttributes, device));
static_assert(offsetof(CudaPointerAttributes, device_pointer) ==
              offsetof(cudaPointerAttributes, devicePointer));
static_assert(offsetof(CudaPointerAttributes, host_pointer) ==
              offsetof(cudaPointerAttributes, hostPointer));
static_assert(sizeof(CudaPointerAttributes) >= sizeof(cudaPointerAttributes));
static_assert(sizeof(smd::gpu::CudaIpcHandle) == sizeof(cudaIpcMemHandle_t));
static_assert(sizeof(smd::gpu::CudaIpcHandle) == sizeof(cudaIpcEventHandle_t));

// pointer_kind.cc's reading of cudaPointerAttributes::type.
static_assert(cudaMemoryTypeUnregistered == 0 && cudaMemoryTypeHost == 1 &&
              cudaMemoryTypeDevice == 2 && cudaMemoryTypeManaged == 3);
static_assert(smd::gpu::kCudaMemcpyDefault == cudaMemcpyDefault);
static_assert(smd::gpu::kCudaStreamNonBlocking == cudaStreamNonBlocking);
static_assert(smd::gpu::kCudaEventDisableTiming == cudaEventDisableTiming);
static_assert(smd::gpu::kCudaIpcMemLazyEnablePeerAccess == cudaIpcMemLazyEnablePeerAccess);
static_assert(smd::gpu::kCudaDevAttrMultiProcessorCount == cudaDevAttrMultiProcessorCount);
static_assert(smd::gpu::kCudaHostAllocPortable == cudaHostAllocPortable);
static_assert(smd::gpu::kCudaHostAllocMapped == cudaHostAllocMapped);
static_assert(smd::gpu::kCudaErrorNotReady == cudaErrorNotReady);
static_assert(smd::gpu::kCuStreamWaitValueGeq == CU_STREAM_WAIT_VALUE_GEQ);
static_assert(smd::gpu::kCuErrorNotSupported == CUDA_ERROR_NOT_SUPPORTED);

// The numbers the stand-in answers with (compared as ints: different enums).
constexpr bool same(int a, int b) { return a == b; }
namespace s = smd_standin;
static_assert(same(s::kSuccess, cudaSuccess) && same(s::kInvalidValue, cudaErrorInvalidValue) &&
              same(s::kMemoryAllocation, cudaErrorMemoryAllocation) &&
              same(s::kNoDevice, cudaErrorNoDevice) &&
              same(s::kInvalidDevice, cudaErrorInvalidDevice) &&
              same(s::kDeviceUninitialized, cudaErrorDeviceUninitialized) &&
              same(s::kInvalidResourceHandle, cudaErrorInvalidResourceHandle) &&
              same(s::kNotReady, cudaErrorNotReady) &&
              same(s::kIllegalAddress, cudaErrorIllegalAddress));
static_assert(same(s::kUnregistered, cudaMemoryTypeUnregistered) &&
              same(s::kHost, cudaMemoryTypeHost) && same(s::kDevice, cudaMemoryTypeDevice) &&
              same(s::kManaged, cudaMemoryTypeManaged));

}  // namespace

int main() {
  printf("smd's CUDA declarations match the toolkit's headers (CUDART_VERSION %d)\n",
         CUDART_VERSION);
  return 0;
}
