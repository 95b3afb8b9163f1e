#include "core/gpu/device_ops.h"

#include <new>

#include "core/gpu/cuda_api.h"
#include "core/gpu/kernel_module.h"
#include "core/util/error.h"

namespace smd::gpu {
namespace {

thread_local void *t_stream = nullptr;

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

void device_copy(void *dst, const void *src, size_t bytes) {
  if (!bytes || dst == src) return;
  finish("cudaMemcpyAsync", api().MemcpyAsync(dst, src, bytes, kCudaMemcpyDefault, t_stream));
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

void *device_alloc(size_t bytes) {
  void *p = nullptr;
  int err = api().Malloc(&p, bytes ? bytes : 1);
  if (err == 2) throw std::bad_alloc();  // cudaErrorMemoryAllocation
  cuda_check("cudaMalloc", err);
  return p;
}

void device_release(void *p) {
  if (p) api().Free(p);
}

}  // namespace smd::gpu
