// A world of ranks as threads of this process: each thread forms its rank
// of the world with smd_comm_init and explicit options (its own store port
// and job token, so several such worlds can exist at once), runs the
// body, and destroys its communicator.
#pragma once

#include <smd.h>

#include <functional>

namespace threadtest {

// Deadline of every blocking step: a bug fails a test instead of hanging it.
inline constexpr int64_t kTimeoutMs = 120000;

// Runs body(comm, rank) on `nranks` threads, one per rank, and joins them.
// Reports (as gtest failures) a rank that cannot join or leave the world.
// A rank whose body ends in a fatal failure aborts the communicator, so
// its peers fail promptly instead of waiting out kTimeoutMs.
void run_thread_world(int nranks, const std::function<void(smd_comm_t *comm, int rank)> &body);

}  // namespace threadtest

#define THREAD_SMD_OK(rank, call)                                          \
  do {                                                                     \
    smd_result_t smd_ok_result_ = (call);                                  \
    ASSERT_EQ(smd_ok_result_, SMD_SUCCESS)                                 \
        << "rank " << (rank) << ": " << #call << ": " << smd_last_error(); \
  } while (0)
