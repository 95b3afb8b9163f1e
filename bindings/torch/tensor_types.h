// What smd makes of a tensor's dtype and of a c10d reduction: the smd
// datatype and op, and the little the backend does around the call where
// torch asks for something smd has no word for (bool, PREMUL_SUM).
#pragma once

#include <smd.h>
#include <ATen/core/Tensor.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <cstddef>
#include <optional>
#include <vector>

namespace smd_torch {

// The smd datatype with exactly this dtype's elements, if smd has one.
std::optional<smd_datatype_t> smd_datatype_of(at::ScalarType type);

// A contiguous tensor's elements as smd moves them: in its own smd
// datatype when there is one (so ranks that disagree on the dtype are told),
// else as bytes (int16, complex, bool, ...: moving needs no arithmetic).
struct Payload {
  smd_datatype_t datatype;
  size_t count;
};
Payload payload_of(const at::Tensor &contiguous);

// How one reduction runs in smd.
struct ReducePlan {
  smd_datatype_t datatype;
  smd_op_t op;
  // PREMUL_SUM: the input is multiplied by this factor (a double, or a
  // one-element tensor per input tensor) before an smd SUM.
  bool premultiply = false;
  double factor = 1.0;
  std::vector<at::Tensor> tensor_factors;
};

// Throws SmdError (SMD_ERR_INVALID_ARGUMENT) with a message naming `call`,
// the dtype and the op when smd cannot do the reduction.
ReducePlan plan_reduction(at::ScalarType type, const c10d::ReduceOp &op, const char *call);

// Multiplies `buffer` (the copy that will be summed) by the plan's factor
// for input `index`; nothing unless the plan premultiplies.
void premultiply(const ReducePlan &plan, at::Tensor &buffer, size_t index);

}  // namespace smd_torch
