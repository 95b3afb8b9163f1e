// The stand-in's devices, errors and copies: cudart's remaining entry points
// smd resolves, and the few of the driver (libcuda) it asks for when the
// stand-in is also named as the driver (SMD_CUDA_DRIVER_LIBRARY).
// SMD_CUDA_STANDIN_DEVICES sets the device count (default 1; 0 answers
// cudaErrorNoDevice, as CUDA does on a machine without a GPU).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "standin.h"

namespace smd_standin {
namespace {

thread_local int t_device = 0;
thread_local int t_last_error = kSuccess;

// cudaPointerAttributes (CUDA 11 and later).
struct PointerAttributes {
  int type;
  int device;
  void *device_pointer;
  void *host_pointer;
};

}  // namespace

int device_count() {
  static const int n = [] {
    const char *v = getenv("SMD_CUDA_STANDIN_DEVICES");
    const int d = v && *v ? atoi(v) : 1;
    return d < 0 ? 0 : d;
  }();
  return n;
}

int current_device() { return t_device; }
void set_current_device(int device) { t_device = device; }

int result(int error) {
  if (error != kSuccess) t_last_error = error;
  return error;
}

}  // namespace smd_standin

using namespace smd_standin;

extern "C" {

int cudaGetDeviceCount(int *count) {
  if (!count) return result(kInvalidValue);
  *count = device_count();
  return result(*count ? kSuccess : kNoDevice);
}

const char *cudaGetErrorString(int error) {
  switch (error) {
    case kSuccess: return "no error (CUDA stand-in)";
    case kInvalidValue: return "invalid argument (CUDA stand-in)";
    case kMemoryAllocation: return "out of memory (CUDA stand-in)";
    case kNoDevice:
      return "no CUDA-capable device is detected (CUDA stand-in: SMD_CUDA_STANDIN_DEVICES=0)";
    case kInvalidDevice: return "invalid device ordinal (CUDA stand-in)";
    case kDeviceUninitialized: return "invalid device context (CUDA stand-in)";
    case kInvalidResourceHandle: return "invalid resource handle (CUDA stand-in)";
    case kNotReady: return "device not ready (CUDA stand-in)";
    case kIllegalAddress: return "an illegal memory access was encountered (CUDA stand-in)";
    case 712: return "part or all of the requested memory range is already mapped (CUDA stand-in)";
    case 713: return "pointer does not correspond to a registered memory region (CUDA stand-in)";
    default: return "unrecognized error code (CUDA stand-in)";
  }
}

const char *cudaGetErrorName(int error) {
  switch (error) {
    case kSuccess: return "cudaSuccess";
    case kInvalidValue: return "cudaErrorInvalidValue";
    case kIllegalAddress: return "cudaErrorIllegalAddress";
    default: return "cudaErrorUnknown";
  }
}

int cudaGetLastError() {
  const int e = t_last_error;
  t_last_error = kSuccess;
  return e;
}

int cudaPeekAtLastError() { return t_last_error; }

int cudaRuntimeGetVersion(int *version) {
  if (!version) return result(kInvalidValue);
  *version = 13000;
  return kSuccess;
}

int cudaDriverGetVersion(int *version) {
  if (!version) return result(kInvalidValue);
  *version = 13000;
  return kSuccess;
}

int cudaGetDevice(int *device) {
  if (!device) return result(kInvalidValue);
  if (!device_count()) return result(kNoDevice);
  *device = current_device();
  return kSuccess;
}

int cudaSetDevice(int device) {
  if (device < 0 || device >= device_count()) return result(kInvalidDevice);
  set_current_device(device);
  return kSuccess;
}

int cudaDeviceGetPCIBusId(char *id, int len, int device) {
  if (!id || len <= 0) return result(kInvalidValue);
  if (device < 0 || device >= device_count()) return result(kInvalidDevice);
  // A bus no machine is likely to have, so no sysfs entry matches it.
  snprintf(id, size_t(len), "0000:%02x:00.0", 0xe0 + device);
  return kSuccess;
}

int cudaDeviceGetAttribute(int *value, int attribute, int device) {
  if (!value) return result(kInvalidValue);
  if (device < 0 || device >= device_count()) return result(kInvalidDevice);
  switch (attribute) {
    case 16: *value = 4; break;  // cudaDevAttrMultiProcessorCount
    case 75: *value = 9; break;  // cudaDevAttrComputeCapabilityMajor
    case 76: *value = 0; break;  // cudaDevAttrComputeCapabilityMinor
    case 41: *value = 1; break;  // cudaDevAttrUnifiedAddressing
    default: *value = 0; break;
  }
  return kSuccess;
}

int cudaPointerGetAttributes(PointerAttributes *attr, const void *ptr) {
  if (!attr) return result(kInvalidValue);
  const Region r = find_region(ptr);
  // Released memory is no longer known to CUDA: an error rather than a
  // claim of host memory the caller would then read.
  if (r.freed) return result(kInvalidValue);
  attr->type = r.type;
  attr->device = r.type == kUnregistered ? -2 : (r.type == kHost ? current_device() : r.device);
  attr->device_pointer = r.type == kUnregistered ? nullptr : const_cast<void *>(ptr);
  attr->host_pointer = r.type == kDevice ? nullptr : const_cast<void *>(ptr);
  return kSuccess;
}

int cudaMemcpyAsync(void *dst, const void *src, size_t bytes, int kind, void *stream) {
  if (kind < 0 || kind > 4) return result(kInvalidValue);
  Stream *s = resolve_stream(stream);
  if (!s) return result(kInvalidResourceHandle);
  if (!bytes) return kSuccess;
  if (!dst || !src) return result(kInvalidValue);
  if (check_range(dst, bytes) != kSuccess || check_range(src, bytes) != kSuccess)
    return result(kInvalidValue);
  enqueue(s, [dst, src, bytes] {
    memmove(dst, src, bytes);
    return int(kSuccess);
  });
  return kSuccess;
}

int cudaMemcpy(void *dst, const void *src, size_t bytes, int kind) {
  const int err = cudaMemcpyAsync(dst, src, bytes, kind, nullptr);
  return err ? err : result(synchronize(resolve_stream(nullptr)));
}

int cudaMemsetAsync(void *dst, int value, size_t bytes, void *stream) {
  Stream *s = resolve_stream(stream);
  if (!s) return result(kInvalidResourceHandle);
  if (!bytes) return kSuccess;
  if (!device_accessible(dst, bytes)) return result(kInvalidValue);
  enqueue(s, [dst, value, bytes] {
    memset(dst, value, bytes);
    return int(kSuccess);
  });
  return kSuccess;
}

// ---- the driver API (CUresult: 0 success, 1 invalid value, 100 no
// device, 101 invalid device) ----

int cuInit(unsigned flags) { return flags ? 1 : (device_count() ? 0 : 100); }

int cuDeviceGet(int *device, int ordinal) {
  if (!device) return 1;
  if (ordinal < 0 || ordinal >= device_count()) return 101;
  *device = ordinal;
  return 0;
}

int cuDeviceGetName(char *name, int len, int device) {
  if (!name || len <= 0) return 1;
  if (device < 0 || device >= device_count()) return 101;
  snprintf(name, size_t(len), "smd CUDA stand-in %d (host memory)", device);
  return 0;
}

int cuDeviceTotalMem_v2(size_t *bytes, int device) {
  if (!bytes) return 1;
  if (device < 0 || device >= device_count()) return 101;
  *bytes = size_t(16) << 30;
  return 0;
}

int cuMemGetAddressRange_v2(uintptr_t *base, size_t *size, uintptr_t ptr) {
  const Region r = find_region(reinterpret_cast<const void *>(ptr));
  if (r.type == kUnregistered) return 1;
  if (base) *base = r.base;
  if (size) *size = r.size;
  return 0;
}

}  // extern "C"
