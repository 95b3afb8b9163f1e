// One rank of a fault scenario (driven by fault_test). Prints one line
// "RESULT <code> <seconds> <message>" for the call the scenario is about,
// and exits 0 when the outcome is the one expected of this rank.
#include <signal.h>
#include <smd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void report(smd_result_t r, double t0) {
  printf("RESULT %s %.2f %s\n", smd_result_string(r), now() - t0,
         r == SMD_SUCCESS ? "" : smd_last_error());
  fflush(stdout);
}

int env_int(const char *name) {
  const char *v = getenv(name);
  return v ? atoi(v) : -1;
}

uint64_t collectives_run(smd_comm_t *w) {
  smd_comm_stats_t s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  smd_comm_get_stats(w, &s);
  return s.collectives;
}

// "ALGO <the algorithm of the last collective>".
void print_algorithm(smd_comm_t *w) {
  smd_comm_stats_t s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  smd_comm_get_stats(w, &s);
  printf("ALGO %s\n", s.last_algorithm);
}

// Returns when the test closes this worker's stdin (or the test is gone).
void wait_for_release() {
  for (;;) {
    char c;
    ssize_t k = read(0, &c, 1);
    if (k == 0 || (k < 0 && errno != EINTR)) return;
  }
}

// Allreduce of `count` floats in a loop until something fails; the victim
// kills itself on iteration `at`, inside the loop, without warning anyone.
// After the first call: "ALGO <the algorithm smd chose>". With `hold`, a
// survivor waits after its error until the test releases it (once every
// survivor has reported) before it exits, without destroying the
// communicator, so no peer learns of the failure from its exit.
int killed_in_collective(smd_comm_t *w, int rank, int victim, size_t count = 1 << 16, int at = 50,
                         bool hold = false) {
  std::vector<float> a(count, 1.0f), b(count);
  double t0 = now();
  for (int i = 0;; ++i) {
    if (rank == victim && i == at) kill(getpid(), SIGKILL);
    t0 = now();
    smd_result_t r = smd_allreduce(a.data(), b.data(), a.size(), SMD_FLOAT32, SMD_SUM, w, nullptr);
    if (r == SMD_SUCCESS && i == 0) print_algorithm(w);
    if (r != SMD_SUCCESS) {
      report(r, t0);
      if (hold) wait_for_release();
      return r == SMD_ERR_PEER_FAILURE ? 0 : 1;
    }
  }
}

// Large allgathers and broadcasts from the victim with the cma algorithms
// forced (SMD_ALGO), in a loop until something fails: the survivors spend
// most of their time in cross-memory reads of the victim's buffers, where
// a thread of the victim kills it as its `at_call`-th collective of the
// loop starts (its statistics count it), not after a sleep.
int killed_during_cma(smd_comm_t *w, int rank, int size, int victim, int at_call) {
  const size_t n = 2 << 20;  // floats: 8 MiB blocks, a 24 MiB broadcast
  std::vector<float> block(n, float(rank)), all(n * size_t(size)), vec(3 * n, 1.0f);
  if (rank == victim) {
    uint64_t start = collectives_run(w);
    std::thread([w, start, at_call] {
      while (collectives_run(w) < start + uint64_t(at_call)) std::this_thread::yield();
      kill(getpid(), SIGKILL);
    }).detach();
  }
  for (int i = 0;; ++i) {
    double t0 = now();
    smd_result_t r = smd_allgather(block.data(), all.data(), n, SMD_FLOAT32, w, nullptr);
    if (r == SMD_SUCCESS)
      r = smd_broadcast(rank == victim ? vec.data() : nullptr, vec.data(), vec.size(), SMD_FLOAT32,
                        victim, w, nullptr);
    if (r == SMD_SUCCESS && i == 0) print_algorithm(w);
    if (r != SMD_SUCCESS) {
      report(r, t0);
      return r == SMD_ERR_PEER_FAILURE ? 0 : 1;
    }
  }
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  std::string scenario = argv[1];
  setvbuf(stdout, nullptr, _IOLBF, 0);
  int rank = env_int("SMD_RANK");
  smd_comm_t *w = nullptr;
  double t0 = now();
  smd_result_t r = smd_comm_init(nullptr, &w);
  if (scenario == "never_joins" || scenario == "stray") {
    report(r, t0);
    return r != SMD_SUCCESS ? 0 : 1;
  }
  if (r != SMD_SUCCESS) {
    report(r, t0);
    return 3;
  }
  int size = 0;
  smd_comm_size(w, &size);
  if (scenario == "killed") return killed_in_collective(w, rank, atoi(argv[2]));
  // 4 MiB: the kill lands in the middle of an operation's phases.
  // killed_large VICTIM [hold]
  if (scenario == "killed_large")
    return killed_in_collective(w, rank, atoi(argv[2]), 1 << 20, 10,
                                argc > 3 && std::string(argv[3]) == "hold");
  // killed_cma VICTIM AT_CALL
  if (scenario == "killed_cma")
    return killed_during_cma(w, rank, size, atoi(argv[2]), atoi(argv[3]));
  if (scenario == "timeout") {
    // Only rank 0 enters the collective.
    int x = 1, y = 0;
    if (rank != 0) {
      wait_for_release();
      return 0;
    }
    t0 = now();
    r = smd_allreduce(&x, &y, 1, SMD_INT32, SMD_SUM, w, nullptr);
    report(r, t0);
    return r == SMD_ERR_TIMEOUT ? 0 : 1;
  }
  if (scenario == "abort") {
    // Ordered by the test, not by sleeps: rank 0 aborts while its
    // allreduce waits (its statistics count the call as started, and the
    // peer has not called), reports, and holds until released; the peer
    // calls only once released, after rank 0 reported.
    int x = 1, y = 0;
    if (rank == 0) {
      uint64_t before = collectives_run(w);
      std::thread aborter([w, before] {
        while (collectives_run(w) == before) std::this_thread::yield();
        smd_comm_abort(w);
      });
      t0 = now();
      r = smd_allreduce(&x, &y, 1, SMD_INT32, SMD_SUM, w, nullptr);
      aborter.join();
      report(r, t0);
      wait_for_release();
      smd_comm_destroy(w);
      return r == SMD_ERR_ABORTED ? 0 : 1;
    }
    // The peer joins late and learns of the abort instead of timing out.
    wait_for_release();
    t0 = now();
    r = smd_allreduce(&x, &y, 1, SMD_INT32, SMD_SUM, w, nullptr);
    report(r, t0);
    smd_comm_destroy(w);
    return r == SMD_ERR_ABORTED ? 0 : 1;
  }
  if (scenario == "ok") {
    int x = 1, y = 0;
    r = smd_allreduce(&x, &y, 1, SMD_INT32, SMD_SUM, w, nullptr);
    report(r, t0);
    if (argc > 2 && std::string(argv[2]) == "hold") wait_for_release();
    smd_comm_destroy(w);
    return r == SMD_SUCCESS && y == size ? 0 : 1;
  }
  return 2;
}
