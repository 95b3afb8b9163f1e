/* mpi_tensors: Open MPI doing what `smd-bench allreduce --tensors K -b SIZE`
 * does, for bench/compare_tensors.sh: per step, K float32 sum allreduces of
 * SIZE bytes each, as K MPI_Iallreduce + one MPI_Waitall (the best MPI
 * offers a framework with many small gradients), out of place.
 *   mpirun -np N mpi_tensors K SIZE_BYTES [ITERS] [WARMUP]
 * Prints one JSON line (rank 0) with smd-bench --json's keys: time_us is
 * the slowest rank's mean time per step. The first step is checked. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (argc < 3) {
    fprintf(stderr, "usage: mpi_tensors K SIZE_BYTES [ITERS] [WARMUP]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int k = atoi(argv[1]);
  size_t n = (size_t)atol(argv[2]) / sizeof(float);
  int iters = argc > 3 ? atoi(argv[3]) : 20, warmup = argc > 4 ? atoi(argv[4]) : 3;
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (k < 1 || n < 1) MPI_Abort(MPI_COMM_WORLD, 2);
  float *send = malloc((size_t)k * n * sizeof(float)),
        *recv = malloc((size_t)k * n * sizeof(float));
  MPI_Request *reqs = malloc((size_t)k * sizeof(MPI_Request));
  if (!send || !recv || !reqs) MPI_Abort(MPI_COMM_WORLD, 1);
  for (size_t i = 0; i < (size_t)k * n; ++i) send[i] = (float)((i + (size_t)rank) % 5);
  unsigned long long errors = 0, all_errors = 0;
  for (int it = -1 - warmup; it < iters; ++it) {
    if (it == 0) MPI_Barrier(MPI_COMM_WORLD);
    static double t0;
    if (it == 0) t0 = MPI_Wtime();
    for (int t = 0; t < k; ++t)
      MPI_Iallreduce(send + (size_t)t * n, recv + (size_t)t * n, (int)n, MPI_FLOAT, MPI_SUM,
                     MPI_COMM_WORLD, &reqs[t]);
    MPI_Waitall(k, reqs, MPI_STATUSES_IGNORE);
    if (it == -1 - warmup)
      for (size_t i = 0; i < (size_t)k * n; ++i) {
        float want = 0;
        for (int r = 0; r < p; ++r) want += (float)((i + (size_t)r) % 5);
        errors += recv[i] != want;
      }
    if (it == iters - 1) {
      double local_us = (MPI_Wtime() - t0) * 1e6 / iters, time_us = 0;
      MPI_Reduce(&local_us, &time_us, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
      MPI_Reduce(&errors, &all_errors, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
      if (rank == 0)
        printf(
            "{\"tensors\": %d, \"mode\": \"mpi\", \"bytes\": %zu, \"ranks\": %d, \"time_us\": "
            "%.3f, "
            "\"per_tensor_us\": %.3f, \"errors\": %llu}\n",
            k, (size_t)k * n * sizeof(float), p, time_us, time_us / k, all_errors);
    }
  }
  free(send);
  free(recv);
  free(reqs);
  MPI_Finalize();
  return all_errors ? 1 : 0;
}
