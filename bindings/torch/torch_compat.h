// The one place that knows torch versions apart. torch 1.x lets a plugin
// backend be a whole c10d::ProcessGroup; torch 2.x splits that into a
// ProcessGroup that dispatches by device to c10d::Backend objects, and a
// plugin provides a Backend. The collective entry points (allreduce,
// allgather, ..., their option structs and c10d::Work) are the same in
// both, so the backend derives from `BackendBase` and overrides them alike.
#pragma once

#include <torch/version.h>

#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#else
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#endif

namespace smd_torch {

#if TORCH_VERSION_MAJOR >= 2
using BackendBase = c10d::Backend;
#else
using BackendBase = c10d::ProcessGroup;
#endif

}  // namespace smd_torch
