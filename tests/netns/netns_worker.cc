// One rank of the link-cut scenario of netns_test.sh: allreduces in a loop
// across two network namespaces until a call fails or the time is up.
//
//   netns_worker SECONDS BYTES
//
// Prints, in this order:
//   ALGO <name>      the algorithm of the first allreduce (smd_comm_get_stats)
//   READY            after that first allreduce succeeded with the right sum
//   FAILED <code> after <s> s, <n> calls: <smd_last_error()>
//                    when a call fails; the process then exits 10
// Exits 0 when SECONDS passed without an error, 3 when init failed, 4 when
// a result was wrong. The script cuts the link after every rank said READY
// and expects every rank to print FAILED, naming a peer rank, and exit 10.
#include <smd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: netns_worker SECONDS BYTES\n");
    return 2;
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);
  double seconds = atof(argv[1]);
  size_t count = strtoull(argv[2], nullptr, 10) / sizeof(float);
  smd_comm_t *w = nullptr;
  if (smd_result_t r = smd_comm_init(nullptr, &w); r != SMD_SUCCESS) {
    printf("FAILED %s in init: %s\n", smd_result_string(r), smd_last_error());
    return 3;
  }
  int size = 0;
  smd_comm_size(w, &size);
  std::vector<float> in(count, 1.0f), out(count);
  double start = now(), last_ok = start;
  for (long calls = 0; now() - start < seconds; ++calls) {
    smd_result_t r = smd_allreduce(in.data(), out.data(), count, SMD_FLOAT32, SMD_SUM, w, nullptr);
    if (r != SMD_SUCCESS) {
      // The process exits without smd_comm_destroy: the world is broken.
      printf("FAILED %s after %.2f s, %ld calls: %s\n", smd_result_string(r), now() - last_ok,
             calls, smd_last_error());
      return 10;
    }
    last_ok = now();
    if (calls == 0) {
      if (out[0] != size || out[count - 1] != size) {
        printf("WRONG %g, expected %d\n", out[0], size);
        return 4;
      }
      smd_comm_stats_t s;
      memset(&s, 0, sizeof s);
      s.struct_size = sizeof s;
      smd_comm_get_stats(w, &s);
      printf("ALGO %s\nREADY\n", s.last_algorithm);
    }
  }
  smd_comm_destroy(w);
  return 0;
}
