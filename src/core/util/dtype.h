// Datatype and operation facts shared by the whole core.
#pragma once

#include <smd.h>

#include <cstddef>
#include <cstdint>

// The datatypes whose elements are plain C types, each once as
// X(datatype, type): the host and device kernel tables expand them.
// clang-format off
#define SMD_INTEGER_DATATYPES(X) \
  X(SMD_INT8, int8_t)            \
  X(SMD_UINT8, uint8_t)          \
  X(SMD_INT32, int32_t)          \
  X(SMD_UINT32, uint32_t)        \
  X(SMD_INT64, int64_t)          \
  X(SMD_UINT64, uint64_t)
// clang-format on
#define SMD_WIDE_FLOAT_DATATYPES(X) X(SMD_FLOAT32, float) X(SMD_FLOAT64, double)

namespace smd {

inline bool valid_datatype(int d) { return d >= 0 && d < SMD_DATATYPE_COUNT; }
inline bool valid_op(int o) { return o >= 0 && o < SMD_OP_COUNT; }

inline size_t datatype_size(smd_datatype_t d) {
  switch (d) {
    case SMD_INT8:
    case SMD_UINT8: return 1;
    case SMD_FLOAT16:
    case SMD_BFLOAT16: return 2;
    case SMD_INT32:
    case SMD_UINT32:
    case SMD_FLOAT32: return 4;
    case SMD_INT64:
    case SMD_UINT64:
    case SMD_FLOAT64: return 8;
    default: return 0;
  }
}

const char *datatype_name(smd_datatype_t d);  // "float32"
const char *op_name(smd_op_t o);              // "sum"

}  // namespace smd
