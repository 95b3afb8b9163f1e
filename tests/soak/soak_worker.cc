// One rank of tests/soak.sh: ITERS random collectives (kind, size,
// communicator: the world, a split into even and odd ranks, a dup) drawn
// from SEED, the same on every rank, with results checked where they are
// known (integer sums, gathers of rank-stamped blocks, a broadcast root's
// data). With VICTIM >= 0, that rank kills itself (SIGKILL) at call
// KILL_AT. Prints one line "SOAK rank R calls N result CODE"; exits 0 when
// every call succeeded and every checked result was right, 2 on a wrong
// result (never acceptable), 3 when a call failed.
//
// usage: soak_worker SEED ITERS VICTIM KILL_AT
#include <signal.h>
#include <smd.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

int fail_wrong(int rank, int call, const char *what) {
  printf("SOAK rank %d calls %d result WRONG %s\n", rank, call, what);
  return 2;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 5) return 1;
  unsigned seed = static_cast<unsigned>(strtoul(argv[1], nullptr, 10));
  int iters = atoi(argv[2]), victim = atoi(argv[3]), kill_at = atoi(argv[4]);
  smd_comm_t *world = nullptr;
  if (smd_comm_init(nullptr, &world) != SMD_SUCCESS) {
    printf("SOAK rank -1 calls 0 result %s init: %s\n", smd_result_string(SMD_ERR_BOOTSTRAP),
           smd_last_error());
    return 3;
  }
  int rank = 0, size = 0;
  smd_comm_rank(world, &rank);
  smd_comm_size(world, &size);
  smd_comm_t *half = nullptr, *dup = nullptr;
  smd_result_t r = smd_comm_split(world, rank % 2, rank, &half);
  if (r == SMD_SUCCESS) r = smd_comm_dup(world, &dup);
  std::mt19937 rng(seed);
  int call = 0;
  for (; r == SMD_SUCCESS && call < iters; ++call) {
    if (rank == victim && call == kill_at) kill(getpid(), SIGKILL);
    smd_comm_t *comms[] = {world, half, dup};
    smd_comm_t *c = comms[rng() % 3];
    int crank = 0, csize = 0;
    smd_comm_rank(c, &crank);
    smd_comm_size(c, &csize);
    size_t count = size_t(1) << (rng() % 17);
    count += rng() % 7;
    std::vector<int32_t> send(count * static_cast<size_t>(csize), crank + 1);
    std::vector<int32_t> recv(count * static_cast<size_t>(csize), -1);
    int root = static_cast<int>(rng() % static_cast<unsigned>(csize));
    switch (rng() % 6) {
      case 0:
        r = smd_allreduce(send.data(), recv.data(), count, SMD_INT32, SMD_SUM, c, nullptr);
        if (r == SMD_SUCCESS && recv[count - 1] != csize * (csize + 1) / 2)
          return fail_wrong(rank, call, "allreduce");
        break;
      case 1:
        r = smd_allgather(send.data(), recv.data(), count, SMD_INT32, c, nullptr);
        if (r == SMD_SUCCESS)
          for (int p = 0; p < csize; ++p)
            if (recv[static_cast<size_t>(p) * count] != p + 1)
              return fail_wrong(rank, call, "allgather");
        break;
      case 2:
        r = smd_broadcast(send.data(), recv.data(), count, SMD_INT32, root, c, nullptr);
        if (r == SMD_SUCCESS && recv[0] != root + 1) return fail_wrong(rank, call, "broadcast");
        break;
      case 3:
        r = smd_reduce_scatter(send.data(), recv.data(), count, SMD_INT32, SMD_SUM, c, nullptr);
        if (r == SMD_SUCCESS && recv[0] != csize * (csize + 1) / 2)
          return fail_wrong(rank, call, "reduce_scatter");
        break;
      case 4:
        r = smd_alltoall(send.data(), recv.data(), count, SMD_INT32, c, nullptr);
        if (r == SMD_SUCCESS && recv[count * static_cast<size_t>(csize) - 1] != csize)
          return fail_wrong(rank, call, "alltoall");
        break;
      default: r = smd_barrier(c, nullptr); break;
    }
  }
  printf("SOAK rank %d calls %d result %s%s%s\n", rank, call, smd_result_string(r),
         r == SMD_SUCCESS ? "" : " ", r == SMD_SUCCESS ? "" : smd_last_error());
  fflush(stdout);
  if (r != SMD_SUCCESS) _exit(3);  // a failed world's teardown is not what this tests
  smd_comm_destroy(dup);
  smd_comm_destroy(half);
  smd_comm_destroy(world);
  return 0;
}
