// What a world of N ranks costs each rank, measured on ranks as threads
// of this process: the time to form the world, the memory, descriptors
// and threads each rank adds, and one round of allreduce, allgather,
// reduce_scatter, broadcast and barrier with every result checked.
// Usage: scale_world_cost NRANKS [COUNT [COLLECTIVES]], COLLECTIVES a
// comma list of allreduce, allgather, reduce_scatter, broadcast, barrier
// (default all); exits 1 on a wrong result or a
// failed call. docs/SCALE.md (Limits) quotes its output. With
// SMD_TRANSPORT=inproc the ranks form their world through a store in this
// process (thread_store.h) instead of rank 0's TCP store; SMD_ALGO picks
// the algorithms and SMD_RANKS_PER_NODE the fake nodes.
#include <smd.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "../threads/process_census.h"
#include "free_port.h"
#include "../../src/tool_support/thread_store.h"

namespace {

long rss_kib() {
  std::ifstream f("/proc/self/status");
  std::string key;
  while (f >> key) {
    if (key == "VmRSS:") {
      long v = 0;
      f >> v;
      return v;
    }
    std::getline(f, key);
  }
  return -1;
}

std::atomic<int> failures{0};

void fail(int rank, const char *what, const char *detail) {
  if (failures++ < 10) std::fprintf(stderr, "rank %d: %s: %s\n", rank, what, detail);
}

#define CHECK_OK(rank, call)                                        \
  do {                                                              \
    if ((call) != SMD_SUCCESS) fail(rank, #call, smd_last_error()); \
  } while (0)

// Values every rank can predict: element i of rank r.
int32_t value(int r, size_t i) { return int32_t((r * 7 + int(i) * 3) % 1000); }

std::string only;  // COLLECTIVES, "" = all
bool wanted(const char *name) {
  return only.empty() ||
         ("," + only + ",").find("," + std::string(name) + ",") != std::string::npos;
}

void check_allreduce(smd_comm_t *comm, int me, int p, size_t n) {
  std::vector<int32_t> in(n), out(n);
  for (size_t i = 0; i < n; ++i) in[i] = value(me, i);
  CHECK_OK(me, smd_allreduce(in.data(), out.data(), n, SMD_INT32, SMD_SUM, comm, nullptr));
  for (size_t i = 0; i < n; ++i) {
    int64_t want = 0;
    for (int r = 0; r < p; ++r) want += value(r, i);
    if (out[i] != int32_t(want)) return fail(me, "allreduce", "wrong sum");
  }
}

void check_allgather(smd_comm_t *comm, int me, int p, size_t n) {
  std::vector<int32_t> in(n), out(n * size_t(p));
  for (size_t i = 0; i < n; ++i) in[i] = value(me, i);
  CHECK_OK(me, smd_allgather(in.data(), out.data(), n, SMD_INT32, comm, nullptr));
  for (int r = 0; r < p; ++r)
    for (size_t i = 0; i < n; ++i)
      if (out[size_t(r) * n + i] != value(r, i)) return fail(me, "allgather", "wrong block");
}

// Rank r's contribution to block b is value(r, b*n + i).
void check_reduce_scatter(smd_comm_t *comm, int me, int p, size_t n) {
  std::vector<int32_t> big(n * size_t(p));
  for (size_t i = 0; i < big.size(); ++i) big[i] = value(me, i);
  std::vector<int32_t> mine(n);
  CHECK_OK(me, smd_reduce_scatter(big.data(), mine.data(), n, SMD_INT32, SMD_SUM, comm, nullptr));
  for (size_t i = 0; i < n; ++i) {
    int64_t want = 0;
    for (int r = 0; r < p; ++r) want += value(r, size_t(me) * n + i);
    if (mine[i] != int32_t(want)) return fail(me, "reduce_scatter", "wrong sum");
  }
}

void check_broadcast(smd_comm_t *comm, int me, int p, size_t n) {
  int root = p - 1;
  std::vector<int32_t> b(n, me == root ? 0 : -1);
  if (me == root)
    for (size_t i = 0; i < n; ++i) b[i] = value(root, i);
  CHECK_OK(me, smd_broadcast(b.data(), b.data(), n, SMD_INT32, root, comm, nullptr));
  for (size_t i = 0; i < n; ++i)
    if (b[i] != value(root, i)) return fail(me, "broadcast", "wrong value");
}

void run_collectives(smd_comm_t *comm, int me, int p, size_t n) {
  if (wanted("allreduce")) check_allreduce(comm, me, p, n);
  if (wanted("allgather")) check_allgather(comm, me, p, n);
  if (wanted("reduce_scatter")) check_reduce_scatter(comm, me, p, n);
  if (wanted("broadcast")) check_broadcast(comm, me, p, n);
  if (wanted("barrier")) CHECK_OK(me, smd_barrier(comm, nullptr));
}

// Holds rank threads until all have arrived, without polling: thousands
// of ranks share two cores.
class Gate {
 public:
  explicit Gate(int n) : left_(n) {}
  // The last arrival runs `last`, then releases everyone.
  template <class F>
  void arrive(F last) {
    std::unique_lock<std::mutex> lock(mu_);
    if (--left_ == 0) {
      last();
      open_.notify_all();
      return;
    }
    open_.wait(lock, [&] { return left_ == 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable open_;
  int left_;
};

// Runs body(rank) on p threads with small stacks (thousands of 8 MiB
// default stacks would crowd the address space) and joins them.
void run_rank_threads(int p, const std::function<void(int)> &body) {
  struct Arg {
    const std::function<void(int)> *body;
    int rank;
  };
  std::vector<Arg> args(static_cast<size_t>(p));
  std::vector<pthread_t> threads;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, size_t(1) << 20);
  for (int r = 0; r < p; ++r) {
    args[size_t(r)] = {&body, r};
    pthread_t t;
    auto start = [](void *a) -> void * {
      auto *arg = static_cast<Arg *>(a);
      (*arg->body)(arg->rank);
      return nullptr;
    };
    if (pthread_create(&t, &attr, start, &args[size_t(r)]) != 0) {
      std::perror("pthread_create");
      std::exit(1);
    }
    threads.push_back(t);
  }
  pthread_attr_destroy(&attr);
  for (pthread_t t : threads) pthread_join(t, nullptr);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s NRANKS [COUNT]\n", argv[0]);
    return 2;
  }
  const int p = std::atoi(argv[1]);
  const size_t n = argc > 2 ? size_t(std::atoll(argv[2])) : 5;
  if (argc > 3) only = argv[3];
  const int port = smdrun::pick_free_port("127.0.0.1");
  const std::string token = "scale-" + std::to_string(getpid());
  const long rss0 = rss_kib();
  const int fds0 = threadtest::open_fd_count(), threads0 = threadtest::thread_count();

  const char *transport = std::getenv("SMD_TRANSPORT");
  const bool in_process = transport && std::string(transport) == "inproc";
  scaletest::ThreadStore store;
  const smd_store_ops_t store_ops = store.ops();

  Gate formed(p), done(p);
  long rss1 = 0;
  int fds1 = 0, threads1 = 0;
  auto t0 = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point c0;
  double init_s = 0, coll_s = 0;
  auto rank_main = [&](int rank) {
    smd_init_options_t o;
    smd_init_options_init(&o);
    o.rank = rank;
    o.world_size = p;
    if (in_process) {
      o.store = &store_ops;
    } else {
      o.store_addr = "127.0.0.1";
      o.store_port = port;
      o.job_token = token.c_str();
    }
    o.timeout_ms = 600000;
    smd_comm_t *comm = nullptr;
    if (smd_comm_init(&o, &comm) != SMD_SUCCESS) fail(rank, "smd_comm_init", smd_last_error());
    formed.arrive([&] {
      c0 = std::chrono::steady_clock::now();
      init_s = std::chrono::duration<double>(c0 - t0).count();
      rss1 = rss_kib();
      fds1 = threadtest::open_fd_count();
      threads1 = threadtest::thread_count() - p;  // less the rank threads themselves
    });
    if (comm) run_collectives(comm, rank, p, n);
    // Leave together: the measurement is of the calls, not of teardown races.
    done.arrive([&] {
      coll_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
    });
    if (comm) CHECK_OK(rank, smd_comm_destroy(comm));
  };
  run_rank_threads(p, rank_main);
  std::printf(
      "ranks %d: form the world %.2f s; per rank %.1f KiB memory, %.2f descriptors, "
      "%.2f threads; one round of %s of %zu int32 %.2f s; %s\n",
      p, init_s, double(rss1 - rss0) / p, double(fds1 - fds0) / p, double(threads1 - threads0) / p,
      only.empty() ? "5 collectives" : only.c_str(), n, coll_s,
      failures ? "FAILED" : "results correct");
  return failures ? 1 : 0;
}
