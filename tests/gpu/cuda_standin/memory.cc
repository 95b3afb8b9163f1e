// The stand-in's memory: every allocation (device, managed, pinned) is its
// own memfd mapping whose range is tracked, so cudaPointerGetAttributes can
// tell the kinds apart, copies can be checked against the allocation's end,
// and another process can map a device allocation through an IPC handle
// (/proc/<pid>/fd/<fd> of the exporter's memfd). A released range is kept
// reserved without access, so freed memory is recognised as such (CUDA's
// cudaErrorInvalidValue) and any stray access faults instead of reading
// reused memory.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>

#include "smd_cuda_standin.h"
#include "standin.h"

namespace smd_standin {
namespace {

struct Allocation {
  size_t size = 0;    // bytes asked for
  size_t mapped = 0;  // bytes mapped (whole pages)
  int type = kUnregistered;
  int device = -1;
  int fd = -1;              // the memfd; -1 for registered host memory
  uint64_t serial = 0;      // names the memfd: smd-cuda-standin-<pid>-<serial>
  bool imported = false;    // mapped from another process's IPC handle
  bool registered = false;  // cudaHostRegister: the caller's memory
  int opens = 0;            // imported: cudaIpcOpenMemHandle calls not yet closed
  pid_t owner = 0;          // imported: the exporting process
};

// The freed ranges remembered; older ones are unmapped for good.
constexpr size_t kFreedKept = 4096;

// Never destroyed: stream workers may still run kernels that ask about
// memory while the process exits.
std::mutex &g_mu = *new std::mutex;
std::map<uintptr_t, Allocation> &g_live = *new std::map<uintptr_t, Allocation>;  // by base
std::map<uintptr_t, size_t> &g_freed = *new std::map<uintptr_t, size_t>;  // base -> mapped bytes
std::deque<uintptr_t> &g_freed_order = *new std::deque<uintptr_t>;
uint64_t g_serial = 0;

// The cudaIpcMemHandle_t's 64 bytes.
struct IpcHandle {
  char magic[8];  // "smdSTDIN"
  int32_t pid;
  int32_t fd;
  uint64_t serial;
  uint64_t size;
  int32_t device;
  char unused[28];
};
static_assert(sizeof(IpcHandle) == 64, "cudaIpcMemHandle_t is 64 bytes");
constexpr char kMagic[8] = {'s', 'm', 'd', 'S', 'T', 'D', 'I', 'N'};

size_t page_round(size_t bytes) {
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

std::string memfd_name(pid_t pid, uint64_t serial) {
  return "smd-cuda-standin-" + std::to_string(pid) + "-" + std::to_string(serial);
}

// The live allocation holding p; g_mu held.
std::map<uintptr_t, Allocation>::iterator live_at(uintptr_t a) {
  auto it = g_live.upper_bound(a);
  if (it == g_live.begin()) return g_live.end();
  --it;
  return a - it->first < std::max<size_t>(it->second.size, 1) ? it : g_live.end();
}

bool freed_at(uintptr_t a) {
  auto it = g_freed.upper_bound(a);
  if (it == g_freed.begin()) return false;
  --it;
  return a - it->first < it->second;
}

// Keeps a released range reserved and unreadable; g_mu held.
void retire(uintptr_t base, size_t mapped) {
  mmap(reinterpret_cast<void *>(base), mapped, PROT_NONE,
       MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  g_freed[base] = mapped;
  g_freed_order.push_back(base);
  if (g_freed_order.size() > kFreedKept) {
    const uintptr_t old = g_freed_order.front();
    g_freed_order.pop_front();
    auto it = g_freed.find(old);
    if (it != g_freed.end()) {
      munmap(reinterpret_cast<void *>(old), it->second);
      g_freed.erase(it);
    }
  }
}

void forget_freed(uintptr_t base, size_t mapped) {
  // A new mapping may reuse addresses of ranges unmapped for good only;
  // but a retired range is still mapped, so this is a safety net.
  auto it = g_freed.lower_bound(base);
  while (it != g_freed.end() && it->first < base + mapped) it = g_freed.erase(it);
}

}  // namespace

Region find_region(const void *p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(g_mu);
  Region r;
  auto it = live_at(a);
  if (it != g_live.end()) {
    r.base = it->first;
    r.size = it->second.size;
    r.type = it->second.type;
    r.device = it->second.device;
  } else if (freed_at(a)) {
    r.freed = true;
  }
  return r;
}

int check_range(const void *p, size_t bytes) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(g_mu);
  if (freed_at(a)) return kInvalidValue;
  auto it = live_at(a);
  if (it == g_live.end()) {
    // Unknown memory: plain host memory, unless the range runs into a
    // device allocation or a freed range.
    auto next = g_live.upper_bound(a);
    if (bytes && next != g_live.end() && next->first < a + bytes) return kInvalidValue;
    auto nf = g_freed.upper_bound(a);
    if (bytes && nf != g_freed.end() && nf->first < a + bytes) return kInvalidValue;
    return kSuccess;
  }
  return a + bytes <= it->first + it->second.size ? kSuccess : kInvalidValue;
}

bool device_accessible(const void *p, size_t bytes) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = live_at(a);
  return it != g_live.end() && a + bytes <= it->first + it->second.size;
}

int allocate(void **out, size_t bytes, int type) {
  if (!out) return kInvalidValue;
  *out = nullptr;
  if (bytes == 0) return kSuccess;  // as CUDA: success, NULL
  std::lock_guard<std::mutex> lock(g_mu);
  const uint64_t serial = ++g_serial;
  const int fd = memfd_create(memfd_name(getpid(), serial).c_str(), MFD_CLOEXEC);
  if (fd < 0) return kMemoryAllocation;
  const size_t mapped = page_round(bytes);
  void *p = MAP_FAILED;
  if (ftruncate(fd, off_t(mapped)) == 0)
    p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    close(fd);
    return kMemoryAllocation;
  }
  forget_freed(reinterpret_cast<uintptr_t>(p), mapped);
  Allocation al;
  al.size = bytes;
  al.mapped = mapped;
  al.type = type;
  al.device = type == kHost ? -1 : current_device();
  al.fd = fd;
  al.serial = serial;
  g_live[reinterpret_cast<uintptr_t>(p)] = al;
  *out = p;
  return kSuccess;
}

int release(void *p, int type) {
  if (!p) return kSuccess;
  int device = -1;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_live.find(reinterpret_cast<uintptr_t>(p));
    // Freeing twice, an inner pointer, another kind's allocation or an
    // IPC mapping: CUDA answers cudaErrorInvalidValue.
    const bool managed_ok = type == kDevice && it != g_live.end() && it->second.type == kManaged;
    if (it == g_live.end() || it->second.imported || it->second.registered ||
        (it->second.type != type && !managed_ok))
      return kInvalidValue;
    device = it->second.device;
  }
  // cudaFree waits for the device's work, which may still use the memory.
  synchronize_device(device < 0 ? current_device() : device);
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_live.find(reinterpret_cast<uintptr_t>(p));
  if (it == g_live.end()) return kInvalidValue;  // freed meanwhile by another thread
  close(it->second.fd);
  retire(it->first, it->second.mapped);
  g_live.erase(it);
  return kSuccess;
}

}  // namespace smd_standin

using namespace smd_standin;

extern "C" {

int cudaMalloc(void **ptr, size_t bytes) { return result(allocate(ptr, bytes, kDevice)); }
int cudaMallocManaged(void **ptr, size_t bytes, unsigned /*flags*/) {
  return result(allocate(ptr, bytes, kManaged));
}
int cudaMallocHost(void **ptr, size_t bytes) { return result(allocate(ptr, bytes, kHost)); }
int cudaHostAlloc(void **ptr, size_t bytes, unsigned /*flags*/) {
  return result(allocate(ptr, bytes, kHost));
}
int cudaHostGetDevicePointer(void **device, void *host, unsigned flags) {
  // Pinned memory is mapped at the same address on the device (unified
  // addressing, which every 64-bit CUDA system has).
  if (!device || flags != 0 || find_region(host).type != kHost) return result(kInvalidValue);
  *device = host;
  return kSuccess;
}
int cudaFree(void *ptr) { return result(release(ptr, kDevice)); }
int cudaFreeHost(void *ptr) { return result(release(ptr, kHost)); }

int cudaHostRegister(void *ptr, size_t bytes, unsigned /*flags*/) {
  if (!ptr || !bytes) return result(kInvalidValue);
  std::lock_guard<std::mutex> lock(g_mu);
  const auto a = reinterpret_cast<uintptr_t>(ptr);
  if (live_at(a) != g_live.end() || live_at(a + bytes - 1) != g_live.end())
    return result(712);  // cudaErrorHostMemoryAlreadyRegistered
  Allocation al;
  al.size = bytes;
  al.type = kHost;
  al.registered = true;
  g_live[a] = al;
  return result(kSuccess);
}

int cudaHostUnregister(void *ptr) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_live.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == g_live.end() || !it->second.registered)
    return result(713);  // cudaErrorHostMemoryNotRegistered
  g_live.erase(it);
  return result(kSuccess);
}

int cudaIpcGetMemHandle(void *handle, void *ptr) {
  if (!handle) return result(kInvalidValue);
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = live_at(reinterpret_cast<uintptr_t>(ptr));
  // Only cudaMalloc's own allocations can be exported (not managed,
  // pinned or imported memory).
  if (it == g_live.end() || it->second.type != kDevice || it->second.imported)
    return result(kInvalidValue);
  IpcHandle h{};
  memcpy(h.magic, kMagic, sizeof kMagic);
  h.pid = getpid();
  h.fd = it->second.fd;
  h.serial = it->second.serial;
  h.size = it->second.size;
  h.device = it->second.device;
  memcpy(handle, &h, sizeof h);
  return result(kSuccess);
}

// cudaIpcMemHandle_t is passed by value: 64 bytes in memory on x86-64 and
// aarch64 alike, which a struct of the same size receives the same way.
struct IpcBytes {
  char b[64];
};

int cudaIpcOpenMemHandle(void **ptr, IpcBytes handle, unsigned /*flags*/) {
  if (!ptr) return result(kInvalidValue);
  *ptr = nullptr;
  IpcHandle h;
  memcpy(&h, handle.b, sizeof h);
  if (memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.size == 0) return result(kInvalidValue);
  if (h.pid == getpid())
    return result(kDeviceUninitialized);  // CUDA refuses its own process's handles
  std::lock_guard<std::mutex> lock(g_mu);
  for (auto &[base, al] : g_live)
    if (al.imported && al.owner == h.pid && al.serial == h.serial) {
      ++al.opens;  // the same handle again: the same mapping
      *ptr = reinterpret_cast<void *>(base);
      return result(kSuccess);
    }
  // The exporter's memfd, checked by name: its fd number may have been
  // reused after a cudaFree.
  const std::string path = "/proc/" + std::to_string(h.pid) + "/fd/" + std::to_string(h.fd);
  char target[256] = {};
  const ssize_t n = readlink(path.c_str(), target, sizeof target - 1);
  if (n <= 0 ||
      std::string(target).find("memfd:" + memfd_name(h.pid, h.serial) + " ") == std::string::npos)
    return result(kInvalidResourceHandle);
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return result(kInvalidResourceHandle);
  const size_t mapped = page_round(h.size);
  void *p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return result(kMemoryAllocation);
  forget_freed(reinterpret_cast<uintptr_t>(p), mapped);
  Allocation al;
  al.size = h.size;
  al.mapped = mapped;
  al.type = kDevice;
  al.device = h.device;
  al.serial = h.serial;
  al.imported = true;
  al.opens = 1;
  al.owner = h.pid;
  g_live[reinterpret_cast<uintptr_t>(p)] = al;
  *ptr = p;
  return result(kSuccess);
}

int cudaIpcCloseMemHandle(void *ptr) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_live.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == g_live.end() || !it->second.imported) return result(kInvalidValue);
  if (--it->second.opens > 0) return result(kSuccess);
  retire(it->first, it->second.mapped);
  g_live.erase(it);
  return result(kSuccess);
}

int smd_cuda_standin_ipc_mappings(void) {
  std::lock_guard<std::mutex> lock(g_mu);
  int n = 0;
  for (const auto &[base, al] : g_live) n += al.imported;
  return n;
}

int smd_cuda_standin_live_allocations(int memory_type) {
  std::lock_guard<std::mutex> lock(g_mu);
  int n = 0;
  for (const auto &[base, al] : g_live)
    if (al.type == memory_type && !al.imported && !al.registered) ++n;
  return n;
}

}  // extern "C"
