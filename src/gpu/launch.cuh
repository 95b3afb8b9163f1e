// Launch shapes shared by the kernels: a fixed block size and a grid large
// enough to fill every multiprocessor a few times, never more blocks than
// the work needs (the kernels loop grid-stride over the rest).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace smd::gpu {

constexpr int kThreads = 512;

// Blocks for `work` items of one thread each.
unsigned grid_for(size_t work);

}  // namespace smd::gpu
