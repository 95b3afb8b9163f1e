// Reductions of the integer datatypes.
#include "gpu/reduce_dispatch.h"
#include "gpu/reduce_kernel.cuh"

namespace smd::gpu {

cudaError_t reduce_int(void *dst, const void *const *srcs, int nsrc, size_t count, int datatype,
                       int op, int divisor, cudaStream_t stream) {
  switch (datatype) {
    SMD_INTEGER_DATATYPES(SMD_GPU_REDUCE_PLAIN)
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace smd::gpu
