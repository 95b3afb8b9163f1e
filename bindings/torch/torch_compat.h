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

namespace smd_torch {

#if TORCH_VERSION_MAJOR >= 2
using BackendBase = c10d::Backend;
#else
using BackendBase = c10d::ProcessGroup;
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
