// One rank of netns_test.sh's shrink scenario: allreduces across two
// network namespaces until a peer is killed, then revoke, shrink and
// allreduces at the new size.
//
//   netns_shrink_worker KILLED_RANK...
//
// Prints READY after a first allreduce with the right sum, then, once a
// call fails, SHRUNK <new size> in <s> s (from the failure to a checked
// allreduce of 1 MiB on the shrunk communicator). The script kills the
// ranks named on the command line after every rank said READY. Exits 0
// after the shrunk communicator reduced right; 3 when init failed, 4 when
// a result was wrong, 5 when no call failed within 60 s, 10 when a
// recovery call failed (FAILED <call> <code>: <message>).
#include <smd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <vector>

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int failed(const char *call, smd_result_t r) {
  printf("FAILED %s %s: %s\n", call, smd_result_string(r), smd_last_error());
  return 10;
}

}  // namespace

int main(int argc, char **argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  std::set<int> killed;
  for (int i = 1; i < argc; ++i) killed.insert(atoi(argv[i]));
  smd_comm_t *w = nullptr;
  if (smd_result_t r = smd_comm_init(nullptr, &w); r != SMD_SUCCESS) {
    failed("init", r);
    return 3;
  }
  int size = 0, me = 0;
  smd_comm_size(w, &size);
  smd_comm_rank(w, &me);
  size_t count = (1 << 20) / sizeof(float);
  std::vector<float> in(count, 1.0f), out(count);
  smd_result_t r = smd_allreduce(in.data(), out.data(), count, SMD_FLOAT32, SMD_SUM, w, nullptr);
  if (r != SMD_SUCCESS) return failed("first allreduce", r);
  if (out[0] != size || out[count - 1] != size) return 4;
  printf("READY\n");
  double start = now();
  while ((r = smd_allreduce(in.data(), out.data(), 1, SMD_FLOAT32, SMD_SUM, w, nullptr)) ==
         SMD_SUCCESS)
    if (now() - start > 60) return 5;
  double failed_at = now();
  printf("LOST %s: %s\n", smd_result_string(r), smd_last_error());
  smd_comm_revoke(w);
  smd_comm_t *shrunk = nullptr;
  std::vector<int> old_to_new(size_t(size), -2);
  if ((r = smd_comm_shrink(w, &shrunk, old_to_new.data())) != SMD_SUCCESS)
    return failed("shrink", r);
  int new_size = 0, expect = 0;
  smd_comm_size(shrunk, &new_size);
  for (int o = 0; o < size; ++o) {
    int want = killed.count(o) ? -1 : expect++;
    if (old_to_new[size_t(o)] != want) {
      printf("WRONG old_to_new[%d] = %d, want %d\n", o, old_to_new[size_t(o)], want);
      return 4;
    }
  }
  if (new_size != expect) return 4;
  r = smd_allreduce(in.data(), out.data(), count, SMD_FLOAT32, SMD_SUM, shrunk, nullptr);
  if (r != SMD_SUCCESS) return failed("allreduce after the shrink", r);
  if (out[0] != new_size || out[count - 1] != new_size) {
    printf("WRONG %g after the shrink, want %d\n", double(out[0]), new_size);
    return 4;
  }
  printf("SHRUNK %d in %.2f s\n", new_size, now() - failed_at);
  // Every survivor is done with the shrunk communicator before any leaves
  // (rank 0's process serves the store).
  if ((r = smd_barrier(shrunk, nullptr)) != SMD_SUCCESS) return failed("barrier", r);
  smd_comm_destroy(shrunk);
  smd_comm_destroy(w);
  return 0;
}
