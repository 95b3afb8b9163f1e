// libsmd-gpu.so, the CUDA kernels (src/gpu), opened on first use: from
// SMD_GPU_MODULE if set, else beside libsmd (<dir>/smd, and <dir>/gpu in a
// build tree), else the install directory.
#pragma once

#include <string>

#include "gpu/smd_gpu_kernels.h"

namespace smd::gpu {

struct KernelModule {
  const smd_gpu_kernels_v1_t *table = nullptr;  // nullptr when not loadable
  std::string path;                             // the file opened
  std::string reason;                           // why not, naming every file tried
};

// Loaded once per process; never throws.
const KernelModule &kernel_module();

// The table, or SMD_ERR_NOT_SUPPORTED with the module's reason.
const smd_gpu_kernels_v1_t &kernels();

}  // namespace smd::gpu
