// Collectives on worlds of 1 to 64 ranks, ranks as threads of this
// process, for counts 0, 1, 7 and one not divisible by the world size, a
// few datatype/operation pairs, in place and not, with each algorithm
// forced through SMD_ALGO; results checked against tools/common/values.h.
// Every world is destroyed at the end of its test, leaving no descriptor
// and no thread behind.
#include <gtest/gtest.h>
#include <smd.h>

#include <algorithm>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "../../tools/common/values.h"
#include "../plugins/scoped_env.h"
#include "process_census.h"
#include "thread_world.h"

using namespace smdvals;
using threadtest::run_thread_world;

namespace {

struct Reduction {
  smd_datatype_t type;
  smd_op_t op;
  const char *name;
};
const Reduction kReductions[] = {
    {SMD_FLOAT32, SMD_SUM, "float32 sum"},
    {SMD_INT32, SMD_MAX, "int32 max"},
    {SMD_FLOAT16, SMD_AVG, "float16 avg"},
    {SMD_UINT8, SMD_PROD, "uint8 prod"},
};

// 0, 1, fewer elements than ranks, and one count that no world size in
// the suite divides; smaller for the big worlds, which are slow on few cores.
std::vector<size_t> counts_for(int nranks) {
  if (nranks >= 33) return {0, 1, 7, 67};
  return {0, 1, 7, 1000};
}

// One rank's view of the world under test.
struct Rank {
  smd_comm_t *comm;
  int rank;
  int size;
};

// A buffer of `elems` elements filled with a byte pattern that no correct
// result leaves behind.
std::vector<uint8_t> sentinel(size_t elems, smd_datatype_t d) {
  return std::vector<uint8_t>(std::max<size_t>(1, elems * dtype_size(d)), 0xA5);
}

void fill(void *buf, size_t off, size_t n, int from, size_t first_index, smd_op_t op,
          smd_datatype_t d) {
  for (size_t i = 0; i < n; ++i) store(buf, off + i, d, value(from, first_index + i, op, d));
}

// Elements [off, off+n) of buf must equal want(i) by same(got, want);
// reports the first few that do not.
template <class Want, class Same>
void expect_elements(const void *buf, size_t off, size_t n, smd_datatype_t d, Want want,
                     Same same) {
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i) {
    double w = want(i), got = load(buf, off + i, d);
    if (!same(got, w) && wrong++ < 3)
      ADD_FAILURE() << "element " << off + i << ": got " << got << " want " << w;
  }
  EXPECT_EQ(wrong, 0u) << "elements wrong";
}

// The reduction over all ranks of elements first_index.. of value().
void expect_reduced(const Rank &w, const void *buf, size_t off, size_t n, size_t first_index,
                    const Reduction &red) {
  expect_elements(
      buf, off, n, red.type,
      [&](size_t i) { return expected(w.size, first_index + i, red.op, red.type); },
      [&](double got, double want) { return close_enough(got, want, red.type, red.op); });
}

// Rank `from`'s value() at elements first_index.., as a copy delivers it.
void expect_copied(const void *buf, size_t off, size_t n, int from, size_t first_index,
                   smd_datatype_t d) {
  expect_elements(
      buf, off, n, d, [&](size_t i) { return load_value(from, first_index + i, SMD_SUM, d); },
      [](double got, double want) { return got == want; });
}

void check_allreduce(const Rank &w, const Reduction &red, size_t n, bool inplace) {
  auto send = sentinel(n, red.type), recv = sentinel(n, red.type);
  fill(send.data(), 0, n, w.rank, 0, red.op, red.type);
  void *out = inplace ? send.data() : recv.data();
  THREAD_SMD_OK(w.rank, smd_allreduce(send.data(), out, n, red.type, red.op, w.comm, nullptr));
  expect_reduced(w, out, 0, n, 0, red);
}

void check_reduce_scatter(const Rank &w, const Reduction &red, size_t n, bool inplace) {
  auto send = sentinel(n * w.size, red.type), recv = sentinel(n, red.type);
  fill(send.data(), 0, n * w.size, w.rank, 0, red.op, red.type);
  void *out = inplace ? send.data() + w.rank * n * dtype_size(red.type) : recv.data();
  THREAD_SMD_OK(w.rank, smd_reduce_scatter(send.data(), out, n, red.type, red.op, w.comm, nullptr));
  expect_reduced(w, out, 0, n, w.rank * n, red);
}

void check_reduce(const Rank &w, const Reduction &red, size_t n, bool inplace) {
  int root = w.size - 1 - static_cast<int>(n % w.size);
  bool am_root = w.rank == root;
  auto send = sentinel(n, red.type), recv = sentinel(n, red.type);
  fill(send.data(), 0, n, w.rank, 0, red.op, red.type);
  // recvbuf may be NULL off the root.
  void *out = !am_root ? nullptr : inplace ? send.data() : recv.data();
  THREAD_SMD_OK(w.rank, smd_reduce(send.data(), out, n, red.type, red.op, root, w.comm, nullptr));
  if (am_root) expect_reduced(w, out, 0, n, 0, red);
}

void check_allgather(const Rank &w, smd_datatype_t d, size_t n, bool inplace) {
  auto send = sentinel(n, d), recv = sentinel(n * w.size, d);
  void *in = inplace ? recv.data() + w.rank * n * dtype_size(d) : send.data();
  fill(in, 0, n, w.rank, 0, SMD_SUM, d);
  THREAD_SMD_OK(w.rank, smd_allgather(in, recv.data(), n, d, w.comm, nullptr));
  for (int r = 0; r < w.size; ++r) expect_copied(recv.data(), r * n, n, r, 0, d);
}

void check_broadcast(const Rank &w, smd_datatype_t d, size_t n, bool inplace) {
  int root = static_cast<int>(n % w.size);
  bool am_root = w.rank == root;
  auto send = sentinel(n, d), recv = sentinel(n, d);
  if (am_root) fill(send.data(), 0, n, root, 0, SMD_SUM, d);
  void *out = inplace && am_root ? send.data() : recv.data();
  // sendbuf is read on the root only and may be NULL elsewhere.
  THREAD_SMD_OK(w.rank,
                smd_broadcast(am_root ? send.data() : nullptr, out, n, d, root, w.comm, nullptr));
  expect_copied(out, 0, n, root, 0, d);
}

void check_alltoall(const Rank &w, smd_datatype_t d, size_t n, bool inplace) {
  auto send = sentinel(n * w.size, d), recv = sentinel(n * w.size, d);
  // Block j carries value(rank, j*n + i): receiver r checks sender s's block r.
  fill(send.data(), 0, n * w.size, w.rank, 0, SMD_SUM, d);
  void *out = inplace ? send.data() : recv.data();
  THREAD_SMD_OK(w.rank, smd_alltoall(send.data(), out, n, d, w.comm, nullptr));
  for (int s = 0; s < w.size; ++s) expect_copied(out, s * n, n, s, w.rank * n, d);
}

// Every check above, in the same order on every rank; stops at the first
// fatal failure (the world is then aborted by run_thread_world).
void check_everything(const Rank &w) {
  for (size_t n : counts_for(w.size)) {
    for (const Reduction &red : kReductions) {
      for (bool inplace : {false, true}) {
        SCOPED_TRACE(testing::Message() << "rank " << w.rank << "/" << w.size << ", " << red.name
                                        << ", count " << n << (inplace ? ", in place" : ""));
        check_allreduce(w, red, n, inplace);
        if (::testing::Test::HasFatalFailure()) return;
        check_reduce_scatter(w, red, n, inplace);
        if (::testing::Test::HasFatalFailure()) return;
        check_reduce(w, red, n, inplace);
        if (::testing::Test::HasFatalFailure()) return;
        check_allgather(w, red.type, n, inplace);
        if (::testing::Test::HasFatalFailure()) return;
        check_broadcast(w, red.type, n, inplace);
        if (::testing::Test::HasFatalFailure()) return;
        check_alltoall(w, red.type, n, inplace);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
    THREAD_SMD_OK(w.rank, smd_barrier(w.comm, nullptr));
  }
}

// Worlds leave nothing behind: the descriptors open and the threads alive
// when a test ends are those there were when it began.
#if defined(__SANITIZE_THREAD__)
constexpr int kSanitizerThreads = 1;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr int kSanitizerThreads = 1;
#else
constexpr int kSanitizerThreads = 0;
#endif
#else
constexpr int kSanitizerThreads = 0;
#endif

class NoLeaks : public ::testing::Test {
 protected:
  void SetUp() override {
    fds_ = threadtest::open_fd_count();
    ASSERT_EQ(threadtest::thread_count(), base_threads()) << "threads alive before the test";
  }
  void TearDown() override {
    EXPECT_EQ(threadtest::wait_for_thread_count(base_threads(), 60000), base_threads())
        << "threads outlived their world";
    EXPECT_EQ(threadtest::open_fd_count(), fds_) << "file descriptors leaked";
  }

 private:
  // The main thread, plus a sanitizer's own (ThreadSanitizer starts one in
  // the background when the process makes its first thread, so make one
  // first): counted before the first world is made. join() returns before
  // the kernel drops the joined thread's /proc/self/task entry, so wait for
  // the count to come down to those before reading it.
  static int base_threads() {
    static const int base = [] {
      std::thread([] {}).join();
      return threadtest::wait_for_thread_count(1 + kSanitizerThreads, 10000);
    }();
    return base;
  }
  int fds_ = 0;
};

using Param = std::tuple<const char *, int>;  // SMD_ALGO, world size

const char *const kAlgos[] = {"auto", "ring", "rd",
                              "allreduce=rd,broadcast=tree,reduce=tree,alltoall=pairwise"};

std::string param_name(const ::testing::TestParamInfo<Param> &info) {
  std::string algo = std::get<0>(info.param);
  if (algo.find('=') != std::string::npos) algo = "tree_pairwise";
  return algo + "_np" + std::to_string(std::get<1>(info.param));
}

class ThreadWorld : public NoLeaks, public ::testing::WithParamInterface<Param> {};

TEST_P(ThreadWorld, EveryCollective) {
  auto [algo, nranks] = GetParam();
  // Read when each rank's world is created, so set before the threads start.
  smd::test::ScopedEnv forced("SMD_ALGO", std::string(algo));
  run_thread_world(nranks, [&](smd_comm_t *comm, int rank) {
    check_everything(Rank{comm, rank, nranks});
  });
}

INSTANTIATE_TEST_SUITE_P(Threads, ThreadWorld,
                         ::testing::Combine(::testing::ValuesIn(kAlgos),
                                            ::testing::Values(1, 5, 7, 16, 33, 64)),
                         param_name);

TEST_F(NoLeaks, SeveralWorldsAtOnce) {
  // Two worlds of different sizes formed and used at the same time.
  auto world = [](int nranks) {
    run_thread_world(nranks, [&](smd_comm_t *comm, int rank) {
      for (const Reduction &red : kReductions) {
        SCOPED_TRACE(testing::Message() << "world of " << nranks << ", " << red.name);
        check_allreduce(Rank{comm, rank, nranks}, red, 1000, false);
        if (::testing::Test::HasFatalFailure()) return;
      }
    });
  };
  std::thread a(world, 5), b(world, 7);
  a.join();
  b.join();
}

}  // namespace
