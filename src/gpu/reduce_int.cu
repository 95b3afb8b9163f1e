// Reductions of the integer datatypes.
#include "gpu/reduce_dispatch.h"
#include "gpu/reduce_kernel.cuh"

namespace smd::gpu {

cudaError_t reduce_int(void *dst, const void *const *srcs, int nsrc, size_t count, int datatype,
                       int op, int divisor, cudaStream_t stream) {
  switch (datatype) {
    case SMD_INT8:
      return reduce_any_op<PlainElement<int8_t>>(dst, srcs, nsrc, count, op, divisor, stream);
    case SMD_UINT8:
      return reduce_any_op<PlainElement<uint8_t>>(dst, srcs, nsrc, count, op, divisor, stream);
    case SMD_INT32:
      return reduce_any_op<PlainElement<int32_t>>(dst, srcs, nsrc, count, op, divisor, stream);
    case SMD_UINT32:
      return reduce_any_op<PlainElement<uint32_t>>(dst, srcs, nsrc, count, op, divisor, stream);
    case SMD_INT64:
      return reduce_any_op<PlainElement<int64_t>>(dst, srcs, nsrc, count, op, divisor, stream);
    case SMD_UINT64:
      return reduce_any_op<PlainElement<uint64_t>>(dst, srcs, nsrc, count, op, divisor, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace smd::gpu
