// The module's internal entry points, one per source file; datatype and op
// are smd_datatype_t and smd_op_t values.
#pragma once

#include <cuda_runtime.h>
#include <smd.h>

#include <cstddef>

namespace smd::gpu {

cudaError_t reduce_float(void *dst, const void *const *srcs, int nsrc, size_t count, int datatype,
                         int op, int divisor, cudaStream_t stream);
cudaError_t reduce_int(void *dst, const void *const *srcs, int nsrc, size_t count, int datatype,
                       int op, int divisor, cudaStream_t stream);
cudaError_t cast(void *dst, int dst_datatype, const void *src, int src_datatype, size_t count,
                 cudaStream_t stream);

}  // namespace smd::gpu
