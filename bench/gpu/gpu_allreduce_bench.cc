// The device allreduce of the ranks sharing a GPU, against the bound set by
// the device memory's traffic (docs/GPU.md, "Left for a GPU machine"): run
// under smdrun, every rank on GPU local_rank % devices; the route is the
// environment's (SMD_GPU_IPC=1: peers' buffers read in place;
// SMD_GPU_STAGE_CHUNK_BYTES=0: staged whole; the default: staged in
// chunks; SMD_GPU_DIRECT=on: the engine's algorithms on the device buffers).
// The bound: every rank's input read once and its output written once,
// 2 x ranks x size bytes through the one GPU's memory, at the rate of a
// device-to-device copy (read + write) measured in the same run. Rank 0
// prints one row per size; results are checked (small integers, exact).
// With `small` after the route name: the latency of out-of-place calls of
// 1 KiB to 1 MiB instead, in microseconds (where the IPC allreduce is
// one-shot up to SMD_GPU_IPC_ONESHOT_BYTES, and host work per call shows).
//
//   smdrun -n 2 gpu-allreduce-bench [max_mib=256] [iterations=10] [route name] [small]
#include <smd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "device_buffers.h"

using namespace smd::gpu;
using namespace smd::gpu::testing;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Seconds per call on every rank, the slowest rank's (a barrier before
// each call, the maximum over ranks after).
double time_allreduce(const CudaApi &a, smd_comm_t *comm, const DeviceBuffer &in,
                      const DeviceBuffer &out, size_t n, int iterations) {
  std::vector<double> times;
  for (int i = 0; i <= iterations; ++i) {
    smd_barrier(comm, nullptr);
    auto t0 = std::chrono::steady_clock::now();
    if (smd_allreduce(in.data(), out.data(), n, SMD_FLOAT32, SMD_SUM, comm, nullptr) !=
        SMD_SUCCESS) {
      fprintf(stderr, "allreduce of %zu floats: %s\n", n, smd_last_error());
      exit(1);
    }
    check("cudaStreamSynchronize", a.StreamSynchronize(nullptr));
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    smd_allreduce(&t, &t, 1, SMD_FLOAT64, SMD_MAX, comm, nullptr);
    if (i > 0) times.push_back(t);  // the first call opens mappings, grows buffers
  }
  return median(times);
}

// Out of place, 1 KiB to 1 MiB: microseconds per call; the output checked.
int latency_rows(const CudaApi &a, smd_comm_t *comm, int rank, int size, int iterations,
                 const std::string &route) {
  if (rank == 0) printf("%-10s %5s %8s %10s\n", "route", "ranks", "KiB", "us/call");
  int failures = 0;
  for (size_t kib = 1; kib <= 1024; kib *= 4) {
    const size_t bytes = kib << 10, n = bytes / 4;
    DeviceBuffer in(a, bytes), out(a, bytes);
    std::vector<float> v(n, float(rank + 1)), got(n);
    in.upload(0, v.data(), bytes);
    const double t = time_allreduce(a, comm, in, out, n, iterations);
    out.download(got.data(), 0, bytes);
    if (got[n - 1] != float(size * (size + 1) / 2)) ++failures;
    if (rank == 0) printf("%-10s %5d %8zu %10.1f\n", route.c_str(), size, kib, t * 1e6);
  }
  if (failures) fprintf(stderr, "[rank %d] %d wrong result(s)\n", rank, failures);
  return failures;
}

}  // namespace

int main(int argc, char **argv) {
  const CudaApi &a = require_device("gpu-allreduce-bench");
  const size_t max_mib = argc > 1 ? strtoull(argv[1], nullptr, 10) : 256;
  const int iterations = argc > 2 ? atoi(argv[2]) : 10;
  const std::string route = argc > 3 ? argv[3] : "default";
  const bool small = argc > 4 && std::string(argv[4]) == "small";
  smd_comm_t *comm = nullptr;
  if (smd_comm_init(nullptr, &comm) != SMD_SUCCESS) {
    fprintf(stderr, "smd_comm_init: %s\n", smd_last_error());
    return 1;
  }
  int rank = 0, size = 1, local = 0;
  smd_comm_rank(comm, &rank);
  smd_comm_size(comm, &size);
  smd_comm_local_rank(comm, &local);
  check("cudaSetDevice", a.SetDevice(local % cuda_status().devices));
  if (small) {
    const int failures = latency_rows(a, comm, rank, size, iterations, route);
    smd_comm_destroy(comm);
    return failures ? 1 : 0;
  }
  if (rank == 0)
    printf("%-10s %5s %8s %10s %10s %10s %8s\n", "route", "ranks", "MiB", "time ms", "copy GB/s",
           "bound ms", "of bound");
  int failures = 0;
  for (size_t mib = 1; mib <= max_mib; mib *= 4) {
    const size_t bytes = mib << 20, n = bytes / 4;
    DeviceBuffer buf(a, bytes), other(a, bytes);
    // The copy rate of this GPU, now, with the other ranks copying too.
    smd_barrier(comm, nullptr);
    auto c0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i)
      check("cudaMemcpyAsync",
            a.MemcpyAsync(other.data(), buf.data(), bytes, kCudaMemcpyDefault, nullptr));
    check("cudaStreamSynchronize", a.StreamSynchronize(nullptr));
    double copy_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count() / iterations;
    smd_allreduce(&copy_s, &copy_s, 1, SMD_FLOAT64, SMD_MAX, comm, nullptr);
    // All ranks copied at once: the GPU moved size x 2 x bytes per copy time.
    const double copy_gbps = double(size) * 2.0 * double(bytes) / copy_s / 1e9;

    std::vector<float> v(n, float(rank + 1));
    buf.upload(0, v.data(), bytes);
    const double t = time_allreduce(a, comm, buf, buf, n, iterations);
    // Check once more from fresh inputs: after the timed calls the values
    // have grown; 1 + 2 + ... + size is exact in float32.
    buf.upload(0, v.data(), bytes);
    smd_allreduce(buf.data(), buf.data(), n, SMD_FLOAT32, SMD_SUM, comm, nullptr);
    std::vector<float> got(n);
    buf.download(got.data(), 0, bytes);
    const float want = float(size * (size + 1) / 2);
    for (size_t i = 0; i < n; i += 4099)
      if (got[i] != want) {
        fprintf(stderr, "[rank %d] element %zu is %g, expected %g\n", rank, i, double(got[i]),
                double(want));
        ++failures;
        break;
      }
    const double bound_s = double(size) * 2.0 * double(bytes) / (copy_gbps * 1e9);
    if (rank == 0)
      printf("%-10s %5d %8zu %10.3f %10.1f %10.3f %7.0f%%\n", route.c_str(), size, mib, t * 1e3,
             copy_gbps, bound_s * 1e3, 100.0 * bound_s / t);
  }
  smd_comm_destroy(comm);
  return failures ? 1 : 0;
}
