// The engine's real choices, for smd-sim to be checked against: runs each
// collective at each size on a world of NRANKS rank threads (inproc
// transport, fake nodes from SMD_RANKS_PER_NODE, the cost model from
// SMD_TUNING_FILE) and prints, from rank 0's statistics after each call,
// the algorithm it ran and the time the cost model predicted for it.
// Usage: sim_engine_choices NRANKS COLLECTIVES SIZES (comma lists; sizes
// in bytes of float32, per rank's block for allgather and reduce_scatter).
// Prints "collective,bytes,algorithm,predicted_us" lines; exits 1 if any
// call fails.
#include <smd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../../tools/smd-sim/call_by_name.h"
#include "../../src/tool_support/thread_store.h"

namespace {

std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

smd_result_t call(const std::string &coll, smd_comm_t *comm, int p, size_t n) {
  std::vector<float> in(n * size_t(p), 1.0f), out(n * size_t(p), 0.0f);
  return smdsim::call_by_name(coll, comm, in.data(), out.data(), n, SMD_FLOAT32);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s NRANKS COLLECTIVES SIZES\n", argv[0]);
    return 2;
  }
  const int p = std::atoi(argv[1]);
  const std::vector<std::string> colls = split(argv[2]), sizes = split(argv[3]);
  scaletest::ThreadStore store;
  const smd_store_ops_t ops = store.ops();
  std::atomic<int> failures{0};
  std::mutex out_mu;
  auto rank_main = [&](int rank) {
    smd_comm_t *comm = nullptr;
    if (scaletest::init_thread_rank(&ops, rank, p, &comm) != SMD_SUCCESS) {
      std::fprintf(stderr, "rank %d: init: %s\n", rank, smd_last_error());
      ++failures;
      return;
    }
    for (const std::string &coll : colls)
      for (const std::string &size : sizes) {
        size_t n = size_t(std::atoll(size.c_str())) / sizeof(float);
        if (call(coll, comm, p, n) != SMD_SUCCESS) {
          std::fprintf(stderr, "rank %d: %s of %s bytes: %s\n", rank, coll.c_str(), size.c_str(),
                       smd_last_error());
          ++failures;
          continue;
        }
        smd_comm_stats_t st{};
        st.struct_size = sizeof st;
        if (rank == 0 && smd_comm_get_stats(comm, &st) == SMD_SUCCESS) {
          std::lock_guard<std::mutex> lock(out_mu);
          std::printf("%s,%s,%s,%.2f\n", coll.c_str(), size.c_str(), st.last_algorithm,
                      st.last_predicted_us);
        }
      }
    smd_comm_destroy(comm);
  };
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r) threads.emplace_back(rank_main, r);
  for (std::thread &t : threads) t.join();
  return failures ? 1 : 0;
}
