#include "core/gpu/cuda_api.h"

#include <dlfcn.h>
#include <link.h>
#include <strings.h>
#include <time.h>

#include <atomic>
#include <cstddef>
#include <mutex>

#include "core/util/error.h"
#include "core/util/log.h"
#include "core/util/params.h"

namespace smd::gpu {
namespace {

struct Loaded {
  CudaApi api{};
  CudaStatus status;
  void *runtime = nullptr;
  void *driver = nullptr;
};

// Resolves every runtime entry; false (with the missing name in `reason`)
// when one is absent.
bool resolve_runtime(void *lib, CudaApi &a, std::string &reason) {
  bool ok = true;
  auto get = [&](auto &fn, const char *name) {
    void *p = dlsym(lib, name);
    if (!p && ok) {
      reason = format("%s lacks %s", "the CUDA runtime", name);
      ok = false;
    }
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
  get(a.GetDeviceCount, "cudaGetDeviceCount");
  get(a.GetErrorString, "cudaGetErrorString");
  get(a.GetLastError, "cudaGetLastError");
  get(a.RuntimeGetVersion, "cudaRuntimeGetVersion");
  get(a.DriverGetVersion, "cudaDriverGetVersion");
  get(a.GetDevice, "cudaGetDevice");
  get(a.SetDevice, "cudaSetDevice");
  get(a.DeviceGetPCIBusId, "cudaDeviceGetPCIBusId");
  get(a.DeviceGetAttribute, "cudaDeviceGetAttribute");
  get(a.PointerGetAttributes, "cudaPointerGetAttributes");
  get(a.StreamCreateWithFlags, "cudaStreamCreateWithFlags");
  get(a.StreamDestroy, "cudaStreamDestroy");
  get(a.StreamSynchronize, "cudaStreamSynchronize");
  get(a.StreamQuery, "cudaStreamQuery");
  get(a.StreamWaitEvent, "cudaStreamWaitEvent");
  get(a.EventCreateWithFlags, "cudaEventCreateWithFlags");
  get(a.EventRecord, "cudaEventRecord");
  get(a.EventQuery, "cudaEventQuery");
  get(a.EventSynchronize, "cudaEventSynchronize");
  get(a.EventDestroy, "cudaEventDestroy");
  get(a.MemcpyAsync, "cudaMemcpyAsync");
  get(a.Malloc, "cudaMalloc");
  get(a.Free, "cudaFree");
  get(a.MallocHost, "cudaMallocHost");
  get(a.FreeHost, "cudaFreeHost");
  get(a.IpcGetMemHandle, "cudaIpcGetMemHandle");
  get(a.IpcOpenMemHandle, "cudaIpcOpenMemHandle");
  get(a.IpcCloseMemHandle, "cudaIpcCloseMemHandle");
  const bool required = ok;
  get(a.HostAlloc, "cudaHostAlloc");
  get(a.HostGetDevicePointer, "cudaHostGetDevicePointer");
  get(a.LaunchHostFunc, "cudaLaunchHostFunc");
  if (required) reason.clear();  // those three are optional: the stream proxy asks for them
  return required;
}

void resolve_driver(void *lib, CudaApi &a) {
  auto get = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
  };
  get(a.cuInit, "cuInit");
  get(a.cuDeviceGet, "cuDeviceGet");
  get(a.cuDeviceGetName, "cuDeviceGetName");
  get(a.cuDeviceTotalMem, "cuDeviceTotalMem_v2");
  get(a.cuMemGetAddressRange, "cuMemGetAddressRange_v2");
  get(a.cuStreamWaitValue32, "cuStreamWaitValue32_v2");
  if (a.cuInit && a.cuInit(0) != 0) a.cuDeviceGet = nullptr;  // no usable driver
}

// libcuda.so.1, or SMD_CUDA_DRIVER_LIBRARY (the tests name the host
// stand-in for CUDA there, which plays the driver too).
const std::string &driver_library() {
  static const std::string name = param_env("SMD_CUDA_DRIVER_LIBRARY").value_or("libcuda.so.1");
  return name;
}

std::string error_text(const CudaApi *a, const char *call, cuda_error_t error) {
  const char *text = a && a->GetErrorString ? a->GetErrorString(error) : nullptr;
  return format("%s: %s (%d)", call, text ? text : "CUDA error", error);
}

Loaded load() {
  Loaded l;
  std::string tried;
  auto names = param_env("SMD_CUDA_LIBRARY")
                   ? std::vector<std::string>{*param_env("SMD_CUDA_LIBRARY")}
                   : std::vector<std::string>{"libcudart.so.13", "libcudart.so.12", "libcudart.so"};
  for (const auto &name : names) {
    l.runtime = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (l.runtime) {
      l.status.library = name;
      break;
    }
    const char *why = dlerror();
    tried += format("%s%s (%s)", tried.empty() ? "" : ", ", name.c_str(), why ? why : "not found");
  }
  if (!l.runtime) {
    l.status.reason = "the CUDA runtime could not be opened: " + tried;
    return l;
  }
  if (!resolve_runtime(l.runtime, l.api, l.status.reason)) return l;
  l.status.loaded = true;
  l.status.standin = dlsym(l.runtime, "smd_cuda_standin_launch") != nullptr;
  l.api.RuntimeGetVersion(&l.status.runtime_version);
  l.api.DriverGetVersion(&l.status.driver_version);
  if ((l.driver = dlopen(driver_library().c_str(), RTLD_NOW | RTLD_LOCAL)))
    resolve_driver(l.driver, l.api);
  int count = 0;
  cuda_error_t err = l.api.GetDeviceCount(&count);
  if (err != 0 && !l.driver) {
    // The runtime then says its driver is "insufficient": there is none.
    l.status.reason = "no CUDA device: no CUDA driver: " + driver_library() + " not found";
    l.api.GetLastError();
  } else if (err != 0) {
    l.status.reason = "no CUDA device: " + error_text(&l.api, "cudaGetDeviceCount", err);
    l.api.GetLastError();  // clear the sticky-free error so later calls start clean
  } else if (count == 0) {
    l.status.reason = "no CUDA device: cudaGetDeviceCount found none";
  } else {
    l.status.devices = count;
  }
  SMD_INFO("init", "CUDA runtime %s (version %d, driver %d): %d device(s)%s%s",
           l.status.library.c_str(), l.status.runtime_version, l.status.driver_version,
           l.status.devices, l.status.reason.empty() ? "" : "; ", l.status.reason.c_str());
  return l;
}

const Loaded &loaded() {
  static const Loaded l = load();  // opened once, kept for the process's life
  return l;
}

enum class Mode { kAuto, kOn, kOff };

Mode mode() {
  static const Mode m = [] {
    std::string v = param_string("SMD_CUDA");
    if (!strcasecmp(v.c_str(), "on") || v == "1") return Mode::kOn;
    if (!strcasecmp(v.c_str(), "off") || v == "0") return Mode::kOff;
    if (strcasecmp(v.c_str(), "auto"))
      SMD_WARN("init", "SMD_CUDA=%s is not auto, on or off; using auto", v.c_str());
    return Mode::kAuto;
  }();
  return m;
}

int64_t coarse_now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// How many shared objects the process has loaded so far (glibc counts
// every dlopen): asking costs one uncontended lock and one callback, so the
// driver is looked for again only after something new was loaded.
unsigned long long objects_loaded() {
  unsigned long long adds = 0;
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t size, void *out) {
        if (size >= offsetof(dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds))
          *static_cast<unsigned long long *>(out) = info->dlpi_adds;
        return 1;  // the counter is the same in every entry: one is enough
      },
      &adds);
  return adds;
}

bool driver_in_process() {
  void *h = dlopen(driver_library().c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (h) dlclose(h);
  return h != nullptr;
}

}  // namespace

const CudaApi *cuda_api() {
  const Loaded &l = loaded();
  return l.status.loaded ? &l.api : nullptr;
}

const CudaStatus &cuda_status() { return loaded().status; }

bool cuda_active() {
  // 1 = active, 2 = never (off, or loaded without a device); 0 = not yet.
  static std::atomic<int> state{0};
  static std::atomic<unsigned long long> checked_at{~0ull};
  static std::atomic<int64_t> last_tick{-1};
  int s = state.load(std::memory_order_acquire);
  if (s) return s == 1;
  Mode m = mode();
  if (m == Mode::kOff) {
    state.store(2, std::memory_order_release);
    return false;
  }
  if (m == Mode::kAuto) {
    // Asking the loader costs tens of nanoseconds, too much for every call
    // of a host-only process: it is asked at most once per tick of the
    // coarse clock (a few ms). Nothing is missed in between: a device
    // pointer exists only after the driver, once loaded, was initialised
    // (cuInit) and allocated, which takes far longer than a tick.
    const int64_t now = coarse_now_ms();
    if (now == last_tick.load(std::memory_order_relaxed)) return false;
    last_tick.store(now, std::memory_order_relaxed);
    const unsigned long long adds = objects_loaded();
    if (adds != 0 && adds == checked_at.load(std::memory_order_relaxed)) return false;
    checked_at.store(adds, std::memory_order_relaxed);
    if (!driver_in_process()) return false;
  }
  s = cuda_status().devices > 0 ? 1 : 2;
  state.store(s, std::memory_order_release);
  return s == 1;
}

std::string cuda_error_text(const char *call, cuda_error_t error) {
  return error_text(cuda_api(), call, error);
}

void cuda_check(const char *call, cuda_error_t error) {
  if (error != 0) fail(SMD_ERR_SYSTEM, "%s", cuda_error_text(call, error).c_str());
}

}  // namespace smd::gpu
