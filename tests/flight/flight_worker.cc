// One rank of the flight recorder test (flight_test.sh): four collectives
// every rank agrees on, then
//   hang:     the last rank skips the fifth call (it sleeps until smdrun
//             stops it with SIGTERM); the others time out in it;
//   mismatch: rank 1 asks for twice the count of the others in the fifth;
//   crash:    rank 0 dies of SIGSEGV before the fifth (its dump must come
//             from the signal handler, and the signal must still kill it).
// The ranks whose fifth call fails exit 3; any other outcome exits 1.
#include <signal.h>
#include <smd.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>

int main(int argc, char **argv) {
  bool hang = argc > 1 && !strcmp(argv[1], "hang");
  bool crash = argc > 1 && !strcmp(argv[1], "crash");
  smd_comm_t *w = nullptr;
  if (smd_comm_init(nullptr, &w) != SMD_SUCCESS) {
    fprintf(stderr, "init: %s\n", smd_last_error());
    return 1;
  }
  int rank = 0, size = 0;
  smd_comm_rank(w, &rank);
  smd_comm_size(w, &size);
  std::vector<float> a(16, 1.0f), b(16);
  std::vector<int32_t> v(4, rank);
  bool ok = true;
  for (int i = 0; i < 3; ++i)
    ok =
        ok && smd_allreduce(a.data(), b.data(), 8, SMD_FLOAT32, SMD_SUM, w, nullptr) == SMD_SUCCESS;
  ok = ok && smd_broadcast(v.data(), v.data(), 4, SMD_INT32, 0, w, nullptr) == SMD_SUCCESS;
  if (!ok) {
    fprintf(stderr, "rank %d: an agreed call failed: %s\n", rank, smd_last_error());
    return 1;
  }
  if (hang && rank == size - 1) {
    sleep(120);  // smdrun stops us (SIGTERM) once the others failed
    return 1;
  }
  if (crash && rank == 0) raise(SIGSEGV);
  size_t count = !hang && !crash && rank == 1 ? 16 : 8;
  smd_result_t r = smd_allreduce(a.data(), b.data(), count, SMD_FLOAT32, SMD_SUM, w, nullptr);
  printf("rank %d: fifth call: %s\n", rank, smd_result_string(r));
  fflush(stdout);
  bool expected = hang || crash
                      ? r == SMD_ERR_TIMEOUT || r == SMD_ERR_PEER_FAILURE || r == SMD_ERR_ABORTED
                      : r == SMD_ERR_MISMATCH || r == SMD_ERR_TRUNCATED;
  // No smd_comm_destroy: a failed world's teardown is not what this tests.
  _exit(expected ? 3 : 1);
}
