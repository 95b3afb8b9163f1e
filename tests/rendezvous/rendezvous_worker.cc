// One rank of a rendezvous scenario (driven by rendezvous_test): forms
// worlds from the environment as an application would, and prints
// "OK <what>" or "FAIL <what>: <smd's message>" lines; exits 0 when all
// went well.
#include <smd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

bool check(smd_result_t r, const std::string &what) {
  if (r == SMD_SUCCESS) return true;
  printf("FAIL %s: %s: %s\n", what.c_str(), smd_result_string(r), smd_last_error());
  fflush(stdout);
  return false;
}

smd_result_t init(smd_comm_t **comm, const char *prefix) {
  smd_init_options_t o;
  smd_init_options_init(&o);
  o.store_prefix = prefix;
  return smd_comm_init(&o, comm);
}

// The sum of every rank's rank + 1 reaches each rank.
bool sum_is_right(smd_comm_t *c, const std::string &what) {
  int rank = 0, size = 0;
  smd_comm_rank(c, &rank);
  smd_comm_size(c, &size);
  int mine = rank + 1, sum = 0;
  if (!check(smd_allreduce(&mine, &sum, 1, SMD_INT32, SMD_SUM, c, nullptr), what)) return false;
  if (sum != size * (size + 1) / 2) {
    printf("FAIL %s: sum %d\n", what.c_str(), sum);
    return false;
  }
  return true;
}

// init, allreduce, destroy, `n` times over.
int cycles(int n) {
  for (int i = 0; i < n; ++i) {
    std::string what = "cycle " + std::to_string(i);
    smd_comm_t *c = nullptr;
    if (!check(init(&c, nullptr), what + " init") || !sum_is_right(c, what) ||
        !check(smd_comm_destroy(c), what + " destroy"))
      return 1;
  }
  printf("OK %d cycles\n", n);
  return 0;
}

// Forms the world, says READY, waits until stdin ends (the test meanwhile
// attacks the store), then duplicates the world and reduces over both.
int hold() {
  if (const char *limit = getenv("RDV_TEST_NOFILE")) {
    rlimit r{};
    getrlimit(RLIMIT_NOFILE, &r);
    r.rlim_cur = strtoul(limit, nullptr, 10);
    if (setrlimit(RLIMIT_NOFILE, &r) != 0) perror("setrlimit");
  }
  smd_comm_t *w = nullptr, *dup = nullptr;
  if (!check(init(&w, nullptr), "init") || !sum_is_right(w, "allreduce")) return 1;
  printf("READY\n");
  fflush(stdout);
  char buf[64];
  while (read(0, buf, sizeof buf) > 0) {
  }
  if (!check(smd_comm_dup(w, &dup), "dup") || !sum_is_right(dup, "allreduce on the dup") ||
      !sum_is_right(w, "allreduce after") || !check(smd_comm_destroy(dup), "destroy dup") ||
      !check(smd_comm_destroy(w), "destroy"))
    return 1;
  printf("OK held\n");
  return 0;
}

// Two worlds alive at once in this process, over one store, with and
// without a store prefix, used in turns.
int two_worlds() {
  smd_comm_t *a = nullptr, *b = nullptr, *c = nullptr;
  if (!check(init(&a, nullptr), "first world") || !check(init(&b, "second/"), "second world") ||
      !check(init(&c, nullptr), "third world"))
    return 1;
  for (int i = 0; i < 3; ++i)
    if (!sum_is_right(b, "second") || !sum_is_right(a, "first") || !sum_is_right(c, "third"))
      return 1;
  if (!check(smd_comm_destroy(a), "destroy first") || !sum_is_right(c, "third after first") ||
      !check(smd_comm_destroy(c), "destroy third") || !sum_is_right(b, "second alone") ||
      !check(smd_comm_destroy(b), "destroy second"))
    return 1;
  printf("OK two worlds\n");
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "cycles") return cycles(argc > 2 ? atoi(argv[2]) : 1);
  if (mode == "hold") return hold();
  if (mode == "two_worlds") return two_worlds();
  fprintf(stderr, "usage: rendezvous_worker cycles N | hold | two_worlds\n");
  return 2;
}
