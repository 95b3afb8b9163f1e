// What the multi-rank device tests share: the world, set up with each rank
// on GPU local_rank % devices, and failures counted per rank and printed
// with smd's last error.
#pragma once

#include <smd.h>

#include <cstdio>
#include <string>

#include "device_buffers.h"

namespace smd::gpu::testing {

inline int g_failures = 0;
inline int g_rank = 0, g_size = 1;

inline void expect(bool ok, const std::string &what) {
  if (!ok) {
    ++g_failures;
    fprintf(stderr, "[rank %d] FAIL %s: %s\n", g_rank, what.c_str(), smd_last_error());
  }
}

// smd_comm_init, g_rank and g_size, and the rank's device; nullptr (with
// the reason printed) when the world cannot be formed.
inline smd_comm_t *init_world(const CudaApi &a) {
  smd_comm_t *comm = nullptr;
  if (smd_comm_init(nullptr, &comm) != SMD_SUCCESS) {
    fprintf(stderr, "smd_comm_init: %s\n", smd_last_error());
    return nullptr;
  }
  int local = 0;
  smd_comm_rank(comm, &g_rank);
  smd_comm_size(comm, &g_size);
  smd_comm_local_rank(comm, &local);
  check("cudaSetDevice", a.SetDevice(local % cuda_status().devices));
  return comm;
}

// A duplicate of `comm`, for a case that breaks it (a failing call, an
// abort) or needs its state fresh (mappings, queued calls); nullptr, with
// the failure counted, when smd refuses.
inline smd_comm_t *dup_comm(smd_comm_t *comm, const std::string &what) {
  smd_comm_t *dup = nullptr;
  expect(smd_comm_dup(comm, &dup) == SMD_SUCCESS, what + ": comm_dup");
  return dup;
}

}  // namespace smd::gpu::testing
