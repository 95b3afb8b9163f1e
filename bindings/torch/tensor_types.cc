#include "tensor_types.h"

#include <c10/core/ScalarType.h>

#include <string>

#include "smd_error.h"
#include "torch_compat.h"

namespace smd_torch {
namespace {

const char *op_name(c10d::ReduceOp::RedOpType op) {
  switch (op) {
    case c10d::ReduceOp::SUM: return "SUM";
    case c10d::ReduceOp::AVG: return "AVG";
    case c10d::ReduceOp::PRODUCT: return "PRODUCT";
    case c10d::ReduceOp::MIN: return "MIN";
    case c10d::ReduceOp::MAX: return "MAX";
    case c10d::ReduceOp::BAND: return "BAND";
    case c10d::ReduceOp::BOR: return "BOR";
    case c10d::ReduceOp::BXOR: return "BXOR";
    case c10d::ReduceOp::PREMUL_SUM: return "PREMUL_SUM";
    default: return "an unknown ReduceOp";
  }
}

[[noreturn]] void refuse(const char *call, at::ScalarType type, c10d::ReduceOp::RedOpType op,
                         const std::string &why) {
  throw SmdError(SMD_ERR_INVALID_ARGUMENT, std::string(call) + ": cannot reduce " +
                                               c10::toString(type) + " tensors with " +
                                               op_name(op) + ": " + why);
}

}  // namespace

std::optional<smd_datatype_t> smd_datatype_of(at::ScalarType type) {
  switch (type) {
    case at::kByte: return SMD_UINT8;
    case at::kChar: return SMD_INT8;
    case at::kInt: return SMD_INT32;
    case at::kLong: return SMD_INT64;
    case at::kHalf: return SMD_FLOAT16;
    case at::kBFloat16: return SMD_BFLOAT16;
    case at::kFloat: return SMD_FLOAT32;
    case at::kDouble: return SMD_FLOAT64;
    default: return std::nullopt;
  }
}

Payload payload_of(const at::Tensor &contiguous) {
  if (auto datatype = smd_datatype_of(contiguous.scalar_type()))
    return {*datatype, static_cast<size_t>(contiguous.numel())};
  return {SMD_UINT8, static_cast<size_t>(contiguous.numel()) * contiguous.element_size()};
}

ReducePlan plan_reduction(at::ScalarType type, const c10d::ReduceOp &op, const char *call) {
  const c10d::ReduceOp::RedOpType kind = op.op_;
  ReducePlan plan{};
  if (type == at::kBool) {
    // A bool is a byte holding 0 or 1: "any" is MAX and "all" is MIN, and
    // both keep every byte 0 or 1 as torch requires of a bool tensor.
    plan.datatype = SMD_UINT8;
    switch (kind) {
      case c10d::ReduceOp::SUM:
      case c10d::ReduceOp::MAX: plan.op = SMD_MAX; return plan;
      case c10d::ReduceOp::PRODUCT:
      case c10d::ReduceOp::MIN: plan.op = SMD_MIN; return plan;
      default: refuse(call, type, kind, "bool tensors take SUM, PRODUCT, MIN or MAX");
    }
  }
  auto datatype = smd_datatype_of(type);
  if (!datatype)
    refuse(call, type, kind,
           "smd reduces int8, uint8, int32, int64, float16, bfloat16, float32, float64 and bool");
  plan.datatype = *datatype;
  switch (kind) {
    case c10d::ReduceOp::SUM: plan.op = SMD_SUM; return plan;
    case c10d::ReduceOp::AVG: plan.op = SMD_AVG; return plan;
    case c10d::ReduceOp::PRODUCT: plan.op = SMD_PROD; return plan;
    case c10d::ReduceOp::MIN: plan.op = SMD_MIN; return plan;
    case c10d::ReduceOp::MAX: plan.op = SMD_MAX; return plan;
    case c10d::ReduceOp::PREMUL_SUM: {
      if (!at::isFloatingType(type))
        refuse(call, type, kind, "PREMUL_SUM needs a floating-point tensor");
      // PREMUL_SUM's supplement is always this type (torch makes it in
      // _make_nccl_premul_sum); no dynamic_cast: the type's RTTI is
      // torch's, and this module's hidden copy would not match it.
      auto *factor = static_cast<c10d::NCCLPreMulSumSupplement *>(op.supplement_.get());
      if (!factor) refuse(call, type, kind, "the op carries no factor");
      plan.op = SMD_SUM;
      plan.premultiply = true;
      plan.factor = factor->double_factor;
      plan.tensor_factors = premul_sum_tensor_factors(*factor);
      return plan;
    }
    default:
      refuse(call, type, kind,
             "smd has SUM, AVG, PRODUCT, MIN, MAX and PREMUL_SUM (no bitwise reductions)");
  }
}

void premultiply(const ReducePlan &plan, at::Tensor &buffer, size_t index) {
  if (!plan.premultiply) return;
  if (plan.tensor_factors.empty()) {
    buffer.mul_(plan.factor);
    return;
  }
  // One factor for every input (torch 2.x), or one per input (1.13).
  if (plan.tensor_factors.size() == 1) index = 0;
  if (index >= plan.tensor_factors.size())
    throw SmdError(SMD_ERR_INVALID_ARGUMENT,
                   "PREMUL_SUM has " + std::to_string(plan.tensor_factors.size()) +
                       " factor tensors but input " + std::to_string(index) + " needs one");
  buffer.mul_(plan.tensor_factors[index].to(buffer.device()));
}

}  // namespace smd_torch
