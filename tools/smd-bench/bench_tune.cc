#include "bench_tune.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

#include "bench_util.h"

namespace smdbench {

namespace {

constexpr size_t kLarge = size_t(8) << 20;  // bandwidth probes
constexpr int kSmallIters = 2000, kLargeIters = 8;

struct Link {
  double alpha_us = -1, gbps = -1;  // < 0: not measured
  const char *why = "";
};

// Fits alpha + bytes/gbps to the time of a small and a large transfer.
Link fit(double small_us, double large_us, double large_bytes) {
  Link l;
  l.alpha_us = small_us;
  double per_byte = std::max(large_us - small_us, 1e-3) / large_bytes;
  l.gbps = 1.0 / per_byte / 1e3;
  return l;
}

// Time of one exchange of `bytes` each way between world ranks a and b,
// both sending and receiving at once as algorithm steps do: the median of
// 5 rounds of `iters`. Other ranks wait.
double exchange_us(smd_comm_t *w, int me, int a, int b, size_t bytes, int iters) {
  std::vector<uint8_t> out(std::max<size_t>(bytes, 1)), in(out.size());
  std::vector<double> rounds;
  int peer = me == a ? b : a;
  for (int rep = 0; rep < 5; ++rep) {
    double t0 = now_s();
    for (int i = 0; i < iters && (me == a || me == b); ++i) {
      smd_request_t *r = nullptr, *s = nullptr;
      CHECK(smd_irecv(in.data(), bytes, SMD_UINT8, peer, 7, w, nullptr, &r));
      CHECK(smd_isend(out.data(), bytes, SMD_UINT8, peer, 7, w, nullptr, &s));
      CHECK(smd_request_wait(r));
      CHECK(smd_request_wait(s));
      CHECK(smd_request_free(r));
      CHECK(smd_request_free(s));
    }
    rounds.push_back((now_s() - t0) * 1e6 / iters);
  }
  std::sort(rounds.begin(), rounds.end());
  double mine = rounds[rounds.size() / 2], out_us = 0;
  // Rank a's number, everywhere.
  double send = me == a ? mine : 0;
  CHECK(smd_allreduce(&send, &out_us, 1, SMD_FLOAT64, SMD_MAX, w, nullptr));
  return out_us;
}

// Time of one allreduce of `bytes` on comm (the slowest member's median).
double allreduce_us(smd_comm_t *c, size_t bytes, int iters) {
  std::vector<float> in(std::max<size_t>(bytes / 4, 1), 1.0f), out(in.size());
  std::vector<double> rounds;
  for (int rep = 0; rep < 5; ++rep) {
    CHECK(smd_barrier(c, nullptr));
    double t0 = now_s();
    for (int i = 0; i < iters; ++i)
      CHECK(smd_allreduce(in.data(), out.data(), bytes / 4, SMD_FLOAT32, SMD_SUM, c, nullptr));
    rounds.push_back((now_s() - t0) * 1e6 / iters);
  }
  std::sort(rounds.begin(), rounds.end());
  double mine = rounds[rounds.size() / 2], out_us = 0;
  CHECK(smd_allreduce(&mine, &out_us, 1, SMD_FLOAT64, SMD_MAX, c, nullptr));
  return out_us;
}

void print_link(FILE *f, const char *name, const Link &l) {
  if (l.alpha_us < 0) {
    fprintf(f, "# %s: not measured (%s); the default stays\n", name, l.why);
    return;
  }
  fprintf(f, "%s_alpha_us = %.3f\n%s_gbps = %.3f\n", name, l.alpha_us, name, l.gbps);
}

}  // namespace

int run_tune(smd_comm_t *w, const std::string &path) {
  int me = 0, p = 1, node = 0;
  CHECK(smd_comm_rank(w, &me));
  CHECK(smd_comm_size(w, &p));
  CHECK(smd_comm_node_index(w, &node));
  std::vector<int> node_of(size_t(p), 0);
  CHECK(smd_allgather(&node, node_of.data(), 1, SMD_INT32, w, nullptr));
  // Ranks of node 0, and the first rank of node 1.
  std::vector<int> node0;
  int other = -1;
  for (int r = 0; r < p; ++r) {
    if (node_of[size_t(r)] == 0) node0.push_back(r);
    else if (other < 0) other = r;
  }
  if (me == 0)
    fprintf(stderr, "smd-bench --tune: %d ranks on %d+ node(s): measuring...\n", p,
            other < 0 ? 1 : 2);

  // The arena: allreduce among node 0's ranks (direct: two synchronised
  // steps, about 2.5x the vector through memory; see the cost model).
  Link arena, local, net;
  smd_comm_t *node_comm = nullptr;
  CHECK(smd_comm_split(w, node, me, &node_comm));
  if (node0.size() >= 2) {
    double t_small = allreduce_us(node_comm, 8, kSmallIters);
    double t_large = allreduce_us(node_comm, kLarge, kLargeIters);
    // Two steps of alpha each; the large call adds the bytes it touches.
    arena = fit(t_small, t_large, 2.5 * double(kLarge));
    arena.alpha_us = t_small / 2;
  } else {
    arena.why = "node 0 has one rank";
  }
  CHECK(smd_comm_destroy(node_comm));
  CHECK(smd_barrier(w, nullptr));
  if (node0.size() >= 2) {
    double s = exchange_us(w, me, node0[0], node0[1], 8, kSmallIters);
    double l = exchange_us(w, me, node0[0], node0[1], kLarge, kLargeIters);
    local = fit(s, l, double(kLarge));
  } else {
    local.why = "node 0 has one rank";
  }
  if (other >= 0) {
    double s = exchange_us(w, me, node0[0], other, 8, kSmallIters);
    double l = exchange_us(w, me, node0[0], other, kLarge, kLargeIters);
    net = fit(s, l, double(kLarge));
  } else {
    net.why = "one node";
  }
  if (me != 0) return 0;
  FILE *f = fopen(path.c_str(), "w");
  if (!f) {
    fprintf(stderr, "smd-bench --tune: cannot write %s: %s\n", path.c_str(), strerror(errno));
    return 1;
  }
  time_t now = time(nullptr);
  char when[64];
  strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&now));
  for (FILE *out : {f, stdout}) {
    fprintf(out,
            "# smd link costs measured by smd-bench --tune on %s, %d ranks (SMD_TUNING_FILE)\n",
            when, p);
    print_link(out, "arena", arena);
    print_link(out, "local", local);
    print_link(out, "net", net);
    // Reductions run at memory speed: a two-input reduction touches three
    // times its output, which the arena's rate measures.
    if (arena.alpha_us >= 0) fprintf(out, "reduce_gbps = %.3f\n", arena.gbps / 3);
  }
  fclose(f);
  return 0;
}

}  // namespace smdbench
