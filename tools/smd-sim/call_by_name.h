// One collective of smd's C API by its name, on buffers the caller sized
// (n elements, or n per rank for allgather, reduce_scatter and alltoall),
// root 0: what smd-sim's replay and the engine-choice test run.
#pragma once

#include <smd.h>

#include <string>

namespace smdsim {

inline smd_result_t call_by_name(const std::string &coll, smd_comm_t *comm, void *in, void *out,
                                 size_t n, smd_datatype_t d) {
  if (coll == "allreduce") return smd_allreduce(in, out, n, d, SMD_SUM, comm, nullptr);
  if (coll == "allgather") return smd_allgather(in, out, n, d, comm, nullptr);
  if (coll == "reduce_scatter") return smd_reduce_scatter(in, out, n, d, SMD_SUM, comm, nullptr);
  if (coll == "broadcast") return smd_broadcast(in, in, n, d, 0, comm, nullptr);
  if (coll == "reduce") return smd_reduce(in, out, n, d, SMD_SUM, 0, comm, nullptr);
  if (coll == "alltoall") return smd_alltoall(in, out, n, d, comm, nullptr);
  if (coll == "barrier") return smd_barrier(comm, nullptr);
  return SMD_ERR_INVALID_ARGUMENT;
}

}  // namespace smdsim
