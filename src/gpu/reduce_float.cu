// Reductions of the floating-point datatypes.
#include "gpu/reduce_dispatch.h"
#include "gpu/reduce_kernel.cuh"

namespace smd::gpu {

cudaError_t reduce_float(void *dst, const void *const *srcs, int nsrc, size_t count, int datatype,
                         int op, int divisor, cudaStream_t stream) {
  switch (datatype) {
    SMD_WIDE_FLOAT_DATATYPES(SMD_GPU_REDUCE_PLAIN)
    case SMD_FLOAT16:
      return reduce_any_op<HalfElement>(dst, srcs, nsrc, count, op, divisor, stream);
    case SMD_BFLOAT16:
      return reduce_any_op<Bfloat16Element>(dst, srcs, nsrc, count, op, divisor, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace smd::gpu
