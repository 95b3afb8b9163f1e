// Element-wise work on buffers of the floating types a sharded set holds
// (float16, bfloat16, float32, float64): conversion between them with a
// scale, and sums of squares. One loop per (source, destination) type pair,
// chosen once per call rather than per element.
#pragma once

#include <smd.h>

#include <cstddef>
#include <cstdint>

namespace smd::sharded {

// True for the datatypes a parameter may have.
bool is_float_type(smd_datatype_t dt);

// dst[i] = src[i] * scale, converting from src_type to dst_type (rounding
// to nearest even when narrowing). dst and src may be the same buffer when
// the types are equal.
void convert_scaled(void *dst, smd_datatype_t dst_type, const void *src, smd_datatype_t src_type,
                    size_t n, double scale);

// Sum of the squares of n elements, accumulated in double.
double sum_of_squares(const void *src, smd_datatype_t type, size_t n);

}  // namespace smd::sharded
