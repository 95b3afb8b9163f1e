/*
 * smd_gpu_kernels.h - the contract between libsmd and its CUDA kernel
 * module, libsmd-gpu.so.
 *
 * libsmd never links CUDA: the kernels are compiled by nvcc into a separate
 * shared object that libsmd opens with dlopen only when a process uses CUDA
 * (src/core/gpu/kernel_module.cc). The module exports one C function,
 * smd_gpu_kernels_v1(), returning a constant table whose first fields are
 * its size and ABI version; entries are only ever appended (the same rule
 * as smd_transport.h). This header is C, includes nothing of CUDA and
 * nothing of the core, so both sides compile it alone.
 *
 * Every entry enqueues work on `stream` (a cudaStream_t; NULL = the legacy
 * default stream) and returns at once with a cudaError_t as int (0 =
 * success). Pointers are device-accessible (device, managed or mapped
 * pinned host memory) and aligned to their element size; nothing else is
 * assumed about alignment (16-byte loads are used where all pointers share
 * the same offset modulo 16, element loads otherwise).
 */
#ifndef SMD_GPU_KERNELS_H
#define SMD_GPU_KERNELS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SMD_GPU_KERNELS_ABI 1
/* The most inputs one fused reduce launch reads; more are folded in
 * launches of this many (the output joins as the first input of the next). */
#define SMD_GPU_MAX_INPUTS 8

typedef struct smd_gpu_kernels_v1 {
  size_t struct_size; /* sizeof(smd_gpu_kernels_v1_t) of the module */
  int abi_version;    /* SMD_GPU_KERNELS_ABI */
  /* The architectures compiled in, e.g. "sm_80 sm_90 compute_90". */
  const char *archs;

  /* dst[i] = srcs[0][i] op ... op srcs[nsrc-1][i], divided by divisor when
   * divisor > 1, for i < count. datatype and op are smd_datatype_t and
   * smd_op_t values with smd.h's semantics (SMD_AVG is given as SMD_SUM
   * plus divisor; float16/bfloat16 accumulate in float32 and round once per
   * output element; integer arithmetic wraps). nsrc >= 1; dst may equal any
   * input (one past the first SMD_GPU_MAX_INPUTS is then read in the first
   * launch: a different order of addition), otherwise buffers must not
   * overlap. Returns cudaErrorInvalidValue
   * (1) for an unknown datatype or op, an element-misaligned pointer, or
   * nsrc < 1. */
  int (*reduce)(void *dst, const void *const *srcs, int nsrc, size_t count, int datatype, int op,
                int divisor, void *stream);

  /* dst[i] = (dst_type)src[i]: SMD_FLOAT32 to or from SMD_FLOAT16 or
   * SMD_BFLOAT16 (round to nearest even). Other pairs: cudaErrorInvalidValue. */
  int (*cast)(void *dst, int dst_datatype, const void *src, int src_datatype, size_t count,
              void *stream);

  /* cudaGetErrorString of the runtime the module was linked with. */
  const char *(*error_string)(int error);
} smd_gpu_kernels_v1_t;

/* The module's one exported symbol. */
const smd_gpu_kernels_v1_t *smd_gpu_kernels_v1(void);

#ifdef __cplusplus
}
#endif

#endif /* SMD_GPU_KERNELS_H */
