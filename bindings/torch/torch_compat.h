// The one place that knows torch versions apart. torch 1.x lets a plugin
// backend be a whole c10d::ProcessGroup; torch 2.x splits that into a
// ProcessGroup that dispatches by device to c10d::Backend objects, and a
// plugin provides a Backend. The collective entry points (allreduce,
// allgather, ..., their option structs and c10d::Work) are the same in
// both, so the backend derives from `BackendBase` and overrides them alike.
#pragma once

#include <torch/version.h>

#include <vector>

#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#else
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#endif
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

namespace smd_torch {

#if TORCH_VERSION_MAJOR >= 2
using BackendBase = c10d::Backend;
#else
using BackendBase = c10d::ProcessGroup;
#endif

// Entry points only torch 2.x's Backend declares (the coalesced flat
// collectives FSDP and DTensor use): overrides there, plain members that
// nothing calls in 1.13.
#if TORCH_VERSION_MAJOR >= 2
#define SMD_TORCH2_OVERRIDE override
#else
#define SMD_TORCH2_OVERRIDE
#endif

// Their Works' op types (1.13 has none of its own for them).
#if TORCH_VERSION_MAJOR >= 2
constexpr c10d::OpType kAllgatherIntoTensorCoalesced =
    c10d::OpType::ALLGATHER_INTO_TENSOR_COALESCED;
constexpr c10d::OpType kReduceScatterTensorCoalesced =
    c10d::OpType::REDUCE_SCATTER_TENSOR_COALESCED;
#else
constexpr c10d::OpType kAllgatherIntoTensorCoalesced = c10d::OpType::ALLGATHER_COALESCED;
constexpr c10d::OpType kReduceScatterTensorCoalesced = c10d::OpType::REDUCE_SCATTER;
#endif

// PREMUL_SUM's factor tensors: torch 1.13 carries one per input tensor,
// torch 2.x one for all (empty: the factor is a number, double_factor).
inline std::vector<at::Tensor> premul_sum_tensor_factors(
    const c10d::NCCLPreMulSumSupplement &supplement) {
#if TORCH_VERSION_MAJOR >= 2
  if (!supplement.tensor_factor.defined()) return {};
  return {supplement.tensor_factor};
#else
  return supplement.tensor_factors;
#endif
}

}  // namespace smd_torch
