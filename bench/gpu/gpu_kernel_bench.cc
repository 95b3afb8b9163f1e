// Bandwidth of libsmd-gpu.so's reduce kernel against the device-to-device
// copy measured in the same run (docs/GPU.md, "Left for a GPU machine").
// Bytes counted are those the GPU moves: a copy reads and writes each byte
// (2 x size), a k-input reduce reads k inputs and writes one output
// ((k + 1) x size). Prints one row per (datatype, inputs, size); exits 77
// without a device.
//
//   gpu-kernel-bench [max_mib=1024] [iterations=20]
#include <smd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "core/util/dtype.h"
#include "device_buffers.h"

using namespace smd;
using namespace smd::gpu;
using namespace smd::gpu::testing;

namespace {

template <class F>
double seconds_per_run(const CudaApi &a, int iterations, F run) {
  run();  // warm-up (first launch loads the module's code onto the device)
  check("cudaStreamSynchronize", a.StreamSynchronize(nullptr));
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) run();
  check("cudaStreamSynchronize", a.StreamSynchronize(nullptr));
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iterations;
}

}  // namespace

int main(int argc, char **argv) {
  const CudaApi &a = require_device("gpu-kernel-bench");
  const size_t max_mib = argc > 1 ? strtoull(argv[1], nullptr, 10) : 1024;
  const int iterations = argc > 2 ? atoi(argv[2]) : 20;
  char bus[64] = {0};
  a.DeviceGetPCIBusId(bus, sizeof bus, 0);
  printf("device 0 (%s), kernels %s, %d iterations per point\n", bus, kernels().archs, iterations);
  printf("%-9s %6s %9s %12s %12s %8s\n", "dtype", "inputs", "MiB", "copy GB/s", "reduce GB/s",
         "ratio");
  constexpr int kMaxInputs = 8;
  for (size_t mib = 1; mib <= max_mib; mib *= 4) {
    const size_t bytes = mib << 20;
    std::vector<std::unique_ptr<DeviceBuffer>> in;
    for (int k = 0; k < kMaxInputs; ++k) in.push_back(std::make_unique<DeviceBuffer>(a, bytes));
    DeviceBuffer out(a, bytes);
    const double copy_s = seconds_per_run(a, iterations, [&] {
      check("cudaMemcpyAsync",
            a.MemcpyAsync(out.data(), in[0]->data(), bytes, kCudaMemcpyDefault, nullptr));
    });
    const double copy_gbps = 2.0 * bytes / copy_s / 1e9;
    for (smd_datatype_t dt : {SMD_FLOAT32, SMD_BFLOAT16}) {
      for (int k : {2, kMaxInputs}) {
        std::vector<const void *> srcs;
        for (int i = 0; i < k; ++i) srcs.push_back(in[i]->data());
        const size_t count = bytes / datatype_size(dt);
        const double s = seconds_per_run(a, iterations, [&] {
          check("reduce",
                kernels().reduce(out.data(), srcs.data(), k, count, dt, SMD_SUM, 1, nullptr));
        });
        const double gbps = (k + 1.0) * bytes / s / 1e9;
        printf("%-9s %6d %9zu %12.1f %12.1f %7.0f%%\n", datatype_name(dt), k, mib, copy_gbps, gbps,
               100.0 * gbps / copy_gbps);
      }
    }
    fflush(stdout);
  }
  return 0;
}
