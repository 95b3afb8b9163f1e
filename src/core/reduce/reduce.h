// Local reduction kernels: vectorized for every datatype and operation,
// chosen at run time by CPU features (AVX2/F16C where present, portable
// code otherwise). float16/bfloat16 are computed in float32.
#pragma once

#include <smd.h>

#include <cstddef>

namespace smd::reduce {

// dst[i] = srcs[0][i] op srcs[1][i] op ... op srcs[nsrc-1][i], for i < count.
// op is SMD_SUM, SMD_PROD, SMD_MIN or SMD_MAX (SMD_AVG is handled by the
// caller as SUM plus `divisor`). If divisor > 1 the result is divided by it
// in the same pass (float types: multiplied by 1/divisor computed in the
// element's compute type; integer types: truncating division).
// nsrc >= 1; with nsrc == 1 this is a copy (plus the division). dst may be
// the same pointer as any srcs[k]; otherwise buffers must not overlap.
// The inputs are combined left to right in the order given, with one
// rounding per output element for float16/bfloat16 (accumulated in float32).
void reduce(void *dst, const void *const *srcs, int nsrc, size_t count, smd_datatype_t datatype,
            smd_op_t op, int divisor);

// Two-input convenience: dst[i] = a[i] op b[i].
void reduce2(void *dst, const void *a, const void *b, size_t count, smd_datatype_t datatype,
             smd_op_t op);

// buf[i] /= divisor (the finishing step of SMD_AVG after a SUM).
void divide(void *buf, size_t count, smd_datatype_t datatype, int divisor);

// Which implementation runs: "avx2+f16c" or "portable".
const char *implementation();

// Force the portable kernels (tests compare both); true = portable.
void force_portable(bool portable);

// Reductions whose inputs and output together exceed this many bytes
// write with streaming stores (the result would leave the caches anyway).
// The node's calibration sets it from the crossover it measured; before
// that, 32 MiB (a round guess at a last-level cache).
void set_streaming_working_set(size_t bytes);
size_t streaming_working_set();

}  // namespace smd::reduce
