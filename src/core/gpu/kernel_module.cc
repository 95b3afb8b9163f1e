#include "core/gpu/kernel_module.h"

#include <dlfcn.h>
#include <unistd.h>

#include <vector>

#include "core/gpu/cuda_api.h"
#include "core/plugin/plugin_loader.h"
#include "core/util/error.h"
#include "core/util/params.h"
#include "smd_build_config.h"

namespace smd::gpu {
namespace {

constexpr const char *kFile = "libsmd-gpu.so";

std::vector<std::string> candidates() {
  if (auto p = param_env("SMD_GPU_MODULE")) return {*p};
  std::vector<std::string> c;
  std::string self = libsmd_folder();
  if (!self.empty()) {
    c.push_back(self + "/smd/" + kFile);
    c.push_back(self + "/gpu/" + kFile);  // build tree: build/src/gpu/
  }
  c.push_back(std::string(SMD_PLUGIN_INSTALL_DIR) + "/" + kFile);
  return c;
}

KernelModule load() {
  KernelModule m;
  // The runtime and a device first: the module needs libcudart, which may
  // live where the dynamic linker would not look (SMD_CUDA_LIBRARY).
  if (!cuda_api() || cuda_status().devices == 0) {
    m.reason = cuda_status().reason;
    return m;
  }
  std::string tried;
  for (const auto &path : candidates()) {
    if (access(path.c_str(), F_OK) != 0) {
      tried += format("%s%s (absent)", tried.empty() ? "" : "; ", path.c_str());
      continue;
    }
    void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char *why = dlerror();
      tried +=
          format("%s%s (%s)", tried.empty() ? "" : "; ", path.c_str(), why ? why : "dlopen failed");
      continue;
    }
    auto entry =
        reinterpret_cast<const smd_gpu_kernels_v1_t *(*)()>(dlsym(h, "smd_gpu_kernels_v1"));
    const smd_gpu_kernels_v1_t *t = entry ? entry() : nullptr;
    if (!t || t->struct_size < sizeof(smd_gpu_kernels_v1_t) ||
        t->abi_version != SMD_GPU_KERNELS_ABI) {
      tried += format("%s%s (not an smd kernel module of ABI %d)", tried.empty() ? "" : "; ",
                      path.c_str(), SMD_GPU_KERNELS_ABI);
      dlclose(h);
      continue;
    }
    m.table = t;  // kept open for the process's life
    m.path = path;
    return m;
  }
  m.reason = "the CUDA kernel module " + std::string(kFile) +
             " was not found (built only when the CUDA toolkit is): " + tried;
  return m;
}

}  // namespace

const KernelModule &kernel_module() {
  static const KernelModule m = load();
  return m;
}

const smd_gpu_kernels_v1_t &kernels() {
  const KernelModule &m = kernel_module();
  if (!m.table) fail(SMD_ERR_NOT_SUPPORTED, "%s", m.reason.c_str());
  return *m.table;
}

}  // namespace smd::gpu
