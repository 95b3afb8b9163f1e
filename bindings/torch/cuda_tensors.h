// CUDA tensors in the c10d backend (compiled only with SMD_TORCH_CUDA, a
// build against a CUDA torch). smd takes device memory with a stream and
// orders its call on that stream (docs/GPU.md, "The contract"): the
// backend passes the current torch stream of the tensors' device, as
// ProcessGroupNCCL orders on its own, so the copies around a call (staged
// outputs, PREMUL_SUM's factor) need no host synchronisation either.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

#include "tensor_staging.h"

namespace smd_torch::cuda {

// The placement of `tensors`, at least one of which, `on_cuda`, is a CUDA
// tensor: every one dense and on its device (else refused naming `call`),
// with the device's current stream.
Placement placement_of(const char *call, const std::vector<at::Tensor> &tensors,
                       const at::Tensor &on_cuda);

// Records an event on `where`'s stream and returns what makes the then
// current stream of that device wait on it (NCCL's Work::wait).
std::function<void()> stream_wait_after(const Placement &where);

}  // namespace smd_torch::cuda
