// libsmd-gpu-standin.so: the kernel table of src/gpu/smd_gpu_kernels.h
// computed on the host, for the CUDA stand-in. Each entry checks its
// arguments as the CUDA module does (an error at launch), then enqueues the
// work on the stand-in's stream; a pointer the device could not reach
// (plain host memory, freed memory) fails when the work runs, with CUDA's
// cudaErrorIllegalAddress at the stream's next synchronisation, as a
// kernel's fault would. The arithmetic is smd's host kernels
// (src/core/reduce), whose combine step the CUDA kernels share.
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/reduce/half.h"
#include "core/reduce/reduce.h"
#include "core/util/dtype.h"
#include "gpu/smd_gpu_kernels.h"
#include "smd_cuda_standin.h"
#include "standin.h"

namespace {

using namespace smd_standin;

size_t element_size(int datatype) {
  return smd::valid_datatype(datatype) ? smd::datatype_size(static_cast<smd_datatype_t>(datatype))
                                       : 0;
}

bool aligned(const void *p, size_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; }

struct Reduce {
  void *dst;
  std::vector<const void *> srcs;
  size_t count;
  int datatype, op, divisor;
};

int run_reduce(void *arg) {
  auto *r = static_cast<Reduce *>(arg);
  const size_t bytes = r->count * element_size(r->datatype);
  if (!device_accessible(r->dst, bytes)) return kIllegalAddress;
  for (const void *s : r->srcs)
    if (!device_accessible(s, bytes)) return kIllegalAddress;
  smd::reduce::reduce(r->dst, r->srcs.data(), int(r->srcs.size()), r->count,
                      static_cast<smd_datatype_t>(r->datatype), static_cast<smd_op_t>(r->op),
                      r->divisor);
  return kSuccess;
}

int reduce(void *dst, const void *const *srcs, int nsrc, size_t count, int datatype, int op,
           int divisor, void *stream) {
  const size_t es = element_size(datatype);
  if (!es || op < SMD_SUM || op > SMD_MAX || nsrc < 1 || !dst || !srcs || !aligned(dst, es))
    return kInvalidValue;
  for (int k = 0; k < nsrc; ++k)
    if (!srcs[k] || !aligned(srcs[k], es)) return kInvalidValue;
  if (count == 0) return kSuccess;
  auto *r =
      new Reduce{dst, std::vector<const void *>(srcs, srcs + nsrc), count, datatype, op, divisor};
  return smd_cuda_standin_launch(stream, run_reduce, r,
                                 [](void *a) { delete static_cast<Reduce *>(a); });
}

struct Cast {
  void *dst;
  int dst_datatype;
  const void *src;
  int src_datatype;
  size_t count;
};

int run_cast(void *arg) {
  auto *c = static_cast<Cast *>(arg);
  if (!device_accessible(c->dst, c->count * element_size(c->dst_datatype)) ||
      !device_accessible(c->src, c->count * element_size(c->src_datatype)))
    return kIllegalAddress;
  for (size_t i = 0; i < c->count; ++i) {
    if (c->src_datatype == SMD_FLOAT32) {
      float f;
      memcpy(&f, static_cast<const char *>(c->src) + 4 * i, 4);
      const uint16_t h = c->dst_datatype == SMD_FLOAT16 ? smd::reduce::float_to_half(f)
                                                        : smd::reduce::float_to_bfloat16(f);
      memcpy(static_cast<char *>(c->dst) + 2 * i, &h, 2);
    } else {
      uint16_t h;
      memcpy(&h, static_cast<const char *>(c->src) + 2 * i, 2);
      const float f = c->src_datatype == SMD_FLOAT16 ? smd::reduce::half_to_float(h)
                                                     : smd::reduce::bfloat16_to_float(h);
      memcpy(static_cast<char *>(c->dst) + 4 * i, &f, 4);
    }
  }
  return kSuccess;
}

int cast(void *dst, int dst_datatype, const void *src, int src_datatype, size_t count,
         void *stream) {
  if (!dst || !src) return kInvalidValue;
  if (count == 0) return kSuccess;
  const bool half = [](int d) { return d == SMD_FLOAT16 || d == SMD_BFLOAT16; }(dst_datatype);
  const bool narrow = src_datatype == SMD_FLOAT32 && half;
  const bool widen =
      dst_datatype == SMD_FLOAT32 && (src_datatype == SMD_FLOAT16 || src_datatype == SMD_BFLOAT16);
  if (!narrow && !widen) return kInvalidValue;
  if (!aligned(narrow ? src : dst, 4) || !aligned(narrow ? dst : src, 2)) return kInvalidValue;
  auto *c = new Cast{dst, dst_datatype, src, src_datatype, count};
  return smd_cuda_standin_launch(stream, run_cast, c,
                                 [](void *a) { delete static_cast<Cast *>(a); });
}

extern "C" const char *cudaGetErrorString(int error);

const smd_gpu_kernels_v1_t kTable = {
    sizeof(smd_gpu_kernels_v1_t), SMD_GPU_KERNELS_ABI, "host stand-in", reduce, cast,
    cudaGetErrorString,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const smd_gpu_kernels_v1_t *smd_gpu_kernels_v1(
    void) {
  return &kTable;
}
