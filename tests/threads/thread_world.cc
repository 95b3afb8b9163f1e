#include "thread_world.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "free_port.h"

namespace threadtest {

void run_thread_world(int nranks, const std::function<void(smd_comm_t *, int)> &body) {
  static std::atomic<int> worlds{0};
  const int port = smdrun::pick_free_port("127.0.0.1");
  const std::string token = "threads-" + std::to_string(getpid()) + "-" + std::to_string(++worlds);

  auto rank_main = [&](int rank) {
    smd_init_options_t options;
    ASSERT_EQ(smd_init_options_init(&options), SMD_SUCCESS);
    options.rank = rank;
    options.world_size = nranks;
    options.store_addr = "127.0.0.1";
    options.store_port = port;
    options.job_token = token.c_str();
    options.timeout_ms = kTimeoutMs;
    smd_comm_t *comm = nullptr;
    THREAD_SMD_OK(rank, smd_comm_init(&options, &comm));
    int got_rank = -1, got_size = -1;
    EXPECT_EQ(smd_comm_rank(comm, &got_rank), SMD_SUCCESS);
    EXPECT_EQ(smd_comm_size(comm, &got_size), SMD_SUCCESS);
    EXPECT_EQ(got_rank, rank);
    EXPECT_EQ(got_size, nranks);
    body(comm, rank);
    if (::testing::Test::HasFatalFailure()) smd_comm_abort(comm);
    THREAD_SMD_OK(rank, smd_comm_destroy(comm));
  };

  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(nranks));
  for (int r = 0; r < nranks; ++r) threads.emplace_back(rank_main, r);
  for (auto &t : threads) t.join();
}

}  // namespace threadtest
