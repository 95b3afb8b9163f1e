#include "core/gpu/device_ops.h"

#include <mutex>
#include <new>
#include <vector>

#include "core/gpu/cuda_api.h"
#include "core/gpu/kernel_module.h"
#include "core/util/error.h"

namespace smd::gpu {
namespace {

thread_local void *t_stream = nullptr;

// Device scratch kept and reused, per GPU: cudaMalloc costs far more than a
// small collective, and cudaFree waits for the whole device, including a
// caller's stream that is held until this very call ends (stream_proxy.cc):
// freeing there would never return. Blocks go back to CUDA at exit. One
// pool for all threads: a block may be released by another thread than the
// one that took it (a hierarchy's scratch).
class ScratchPool {
 public:
  ~ScratchPool() {
    const CudaApi *a = cuda_api();
    if (a)
      for (const Block &b : blocks_) a->Free(b.p);
  }
  void *get(const CudaApi &a, size_t bytes) {
    int device = 0;
    cuda_check("cudaGetDevice", a.GetDevice(&device));
    std::lock_guard<std::mutex> lock(mu_);
    Block *best = nullptr;
    for (Block &b : blocks_)
      if (!b.used && b.device == device && b.size >= bytes && (!best || b.size < best->size))
        best = &b;
    if (!best) {
      void *p = nullptr;
      int err = a.Malloc(&p, bytes);
      if (err == 2) throw std::bad_alloc();  // cudaErrorMemoryAllocation
      cuda_check("cudaMalloc", err);
      blocks_.push_back({p, bytes, device, false});
      best = &blocks_.back();
    }
    best->used = true;
    return best->p;
  }
  void put(void *p) {
    std::lock_guard<std::mutex> lock(mu_);
    for (Block &b : blocks_)
      if (b.p == p) b.used = false;
  }

 private:
  struct Block {
    void *p;
    size_t size;
    int device;
    bool used;
  };
  std::mutex mu_;
  std::vector<Block> blocks_;
};

ScratchPool &scratch_pool() {
  static ScratchPool pool;
  return pool;
}

const CudaApi &api() {
  const CudaApi *a = cuda_api();
  if (!a) fail(SMD_ERR_NOT_SUPPORTED, "device memory needs CUDA: %s", cuda_status().reason.c_str());
  return *a;
}

void finish(const char *call, int error) {
  cuda_check(call, error);
  device_synchronize();
}

void kernel_error(const char *what, int error) {
  if (error != 0)
    fail(SMD_ERR_SYSTEM, "%s kernel: %s (%d)", what, kernels().error_string(error), error);
}

}  // namespace

StreamScope::StreamScope(void *stream) : saved_(t_stream) { t_stream = stream; }
StreamScope::~StreamScope() { t_stream = saved_; }
void *current_stream() { return t_stream; }

DeviceScope::DeviceScope(int device) {
  if (device < 0) return;
  cuda_check("cudaGetDevice", api().GetDevice(&previous_));
  if (previous_ == device) {
    previous_ = -1;
    return;
  }
  cuda_check("cudaSetDevice", api().SetDevice(device));
}

DeviceScope::~DeviceScope() {
  if (previous_ >= 0) api().SetDevice(previous_);
}

void device_synchronize() {
  cuda_check("cudaStreamSynchronize", api().StreamSynchronize(t_stream));
}

void device_copy_queued(void *dst, const void *src, size_t bytes) {
  if (!bytes || dst == src) return;
  cuda_check("cudaMemcpyAsync", api().MemcpyAsync(dst, src, bytes, kCudaMemcpyDefault, t_stream));
}

void device_copy(void *dst, const void *src, size_t bytes) {
  if (!bytes || dst == src) return;
  device_copy_queued(dst, src, bytes);
  device_synchronize();
}

void device_reduce(void *dst, const void *const *srcs, int nsrc, size_t count, smd_datatype_t dt,
                   smd_op_t op, int divisor) {
  kernel_error("reduce", kernels().reduce(dst, srcs, nsrc, count, dt, op, divisor, t_stream));
  finish("reduce kernel launch", 0);
}

void device_reduce2(void *dst, const void *a, const void *b, size_t count, smd_datatype_t dt,
                    smd_op_t op) {
  const void *srcs[2] = {a, b};
  device_reduce(dst, srcs, 2, count, dt, op, 1);
}

void device_divide(void *buf, size_t count, smd_datatype_t dt, int divisor) {
  const void *srcs[1] = {buf};
  device_reduce(buf, srcs, 1, count, dt, SMD_SUM, divisor);
}

void *device_alloc(size_t bytes) { return scratch_pool().get(api(), bytes ? bytes : 1); }

void device_release(void *p) {
  if (p) scratch_pool().put(p);
}

}  // namespace smd::gpu
