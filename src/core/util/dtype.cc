#include "core/util/dtype.h"

namespace smd {

const char *datatype_name(smd_datatype_t d) {
  switch (d) {
    case SMD_INT8: return "int8";
    case SMD_UINT8: return "uint8";
    case SMD_INT32: return "int32";
    case SMD_UINT32: return "uint32";
    case SMD_INT64: return "int64";
    case SMD_UINT64: return "uint64";
    case SMD_FLOAT16: return "float16";
    case SMD_BFLOAT16: return "bfloat16";
    case SMD_FLOAT32: return "float32";
    case SMD_FLOAT64: return "float64";
    default: return "unknown-datatype";
  }
}

const char *op_name(smd_op_t o) {
  switch (o) {
    case SMD_SUM: return "sum";
    case SMD_PROD: return "prod";
    case SMD_MIN: return "min";
    case SMD_MAX: return "max";
    case SMD_AVG: return "avg";
    default: return "unknown-op";
  }
}

}  // namespace smd
