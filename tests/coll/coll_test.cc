// Every collective x datatype x op x in-place/out-of-place x count,
// checked against an independent reference (tools/common/values.h), on
// the world of whatever size smdrun gives (1, 2, 3, 4, 8 in the suite),
// with whatever algorithms SMD_ALGO forces.
#include <gtest/gtest.h>
#include <smd.h>

#include <time.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "../../tools/common/values.h"
#include "mp_env.h"

using namespace smdvals;
using mptest::rank;
using mptest::size;
using mptest::world;

namespace {

// 10007: staged with streaming stores (4-64 KiB a round) for most types.
const size_t kCounts[] = {0, 1, 7, 1000, 10007, (1u << 20) + 3};

const char *type_name(smd_datatype_t d) {
  static const char *n[] = {"int8",   "uint8",   "int32",    "uint32",  "int64",
                            "uint64", "float16", "bfloat16", "float32", "float64"};
  return n[d];
}
const char *op_str(smd_op_t o) {
  static const char *n[] = {"sum", "prod", "min", "max", "avg"};
  return n[o];
}

std::vector<uint8_t> buffer(size_t elems, smd_datatype_t d) {
  // A byte pattern that no correct result leaves behind.
  return std::vector<uint8_t>(std::max<size_t>(1, elems * dtype_size(d)), 0xA5);
}

void fill(void *buf, size_t off, size_t n, int from, size_t first_index, smd_op_t op,
          smd_datatype_t d) {
  for (size_t i = 0; i < n; ++i) store(buf, off + i, d, value(from, first_index + i, op, d));
}

// Check n reduced elements; report the first few differences only.
void expect_reduced(const void *buf, size_t off, size_t n, size_t first_index, smd_op_t op,
                    smd_datatype_t d) {
  int shown = 0;
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i) {
    double want = expected(size(), first_index + i, op, d), got = load(buf, off + i, d);
    if (!close_enough(got, want, d, op)) {
      ++wrong;
      if (shown++ < 3)
        ADD_FAILURE() << "rank " << rank() << " element " << i << ": got " << got << " want "
                      << want;
    }
  }
  EXPECT_EQ(wrong, 0u) << "rank " << rank();
}

void expect_values(const void *buf, size_t off, size_t n, int from, size_t first_index, smd_op_t op,
                   smd_datatype_t d) {
  int shown = 0;
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i) {
    double want = load_value(from, first_index + i, op, d), got = load(buf, off + i, d);
    if (got != want) {
      ++wrong;
      if (shown++ < 3)
        ADD_FAILURE() << "rank " << rank() << " element " << off + i << ": got " << got << " want "
                      << want;
    }
  }
  EXPECT_EQ(wrong, 0u) << "rank " << rank();
}

using ReduceParam = std::tuple<smd_datatype_t, smd_op_t, bool, size_t>;
using MoveParam = std::tuple<smd_datatype_t, bool, size_t>;

std::string reduce_name(const ::testing::TestParamInfo<ReduceParam> &i) {
  return std::string(type_name(std::get<0>(i.param))) + "_" + op_str(std::get<1>(i.param)) +
         (std::get<2>(i.param) ? "_inplace_" : "_") + std::to_string(std::get<3>(i.param));
}
std::string move_name(const ::testing::TestParamInfo<MoveParam> &i) {
  return std::string(type_name(std::get<0>(i.param))) + (std::get<1>(i.param) ? "_inplace_" : "_") +
         std::to_string(std::get<2>(i.param));
}

class Reducing : public ::testing::TestWithParam<ReduceParam> {};
class Moving : public ::testing::TestWithParam<MoveParam> {};

TEST_P(Reducing, Allreduce) {
  auto [d, op, inplace, n] = GetParam();
  auto send = buffer(n, d), recv = buffer(n, d);
  fill(send.data(), 0, n, rank(), 0, op, d);
  void *out = inplace ? send.data() : recv.data();
  SMD_OK(smd_allreduce(send.data(), out, n, d, op, world(), nullptr));
  expect_reduced(out, 0, n, 0, op, d);
}

TEST_P(Reducing, ReduceScatter) {
  auto [d, op, inplace, n] = GetParam();
  if (n > 100000) n /= size();  // keep the input near the others' size
  int p = size();
  auto send = buffer(n * p, d), recv = buffer(n, d);
  fill(send.data(), 0, n * p, rank(), 0, op, d);
  void *out = inplace ? send.data() + rank() * n * dtype_size(d) : recv.data();
  SMD_OK(smd_reduce_scatter(send.data(), out, n, d, op, world(), nullptr));
  expect_reduced(out, 0, n, rank() * n, op, d);
}

TEST_P(Reducing, Reduce) {
  auto [d, op, inplace, n] = GetParam();
  int root = size() - 1;
  auto send = buffer(n, d), recv = buffer(n, d);
  fill(send.data(), 0, n, rank(), 0, op, d);
  void *out = inplace && rank() == root ? send.data() : recv.data();
  SMD_OK(smd_reduce(send.data(), out, n, d, op, root, world(), nullptr));
  if (rank() == root) expect_reduced(out, 0, n, 0, op, d);
}

TEST_P(Moving, Allgather) {
  auto [d, inplace, n] = GetParam();
  if (n > 100000) n /= size();
  int p = size();
  auto send = buffer(n, d), recv = buffer(n * p, d);
  void *in = inplace ? recv.data() + rank() * n * dtype_size(d) : send.data();
  fill(in, 0, n, rank(), 0, SMD_SUM, d);
  SMD_OK(smd_allgather(in, recv.data(), n, d, world(), nullptr));
  for (int r = 0; r < p; ++r) expect_values(recv.data(), r * n, n, r, 0, SMD_SUM, d);
}

TEST_P(Moving, Broadcast) {
  auto [d, inplace, n] = GetParam();
  int root = size() > 1 ? 1 : 0;
  auto send = buffer(n, d), recv = buffer(n, d);
  if (rank() == root) fill(send.data(), 0, n, root, 0, SMD_SUM, d);
  void *out = inplace ? send.data() : recv.data();
  SMD_OK(smd_broadcast(rank() == root ? send.data() : nullptr, out, n, d, root, world(), nullptr));
  expect_values(out, 0, n, root, 0, SMD_SUM, d);
}

TEST_P(Moving, Alltoall) {
  auto [d, inplace, n] = GetParam();
  if (n > 100000) n /= size();
  int p = size();
  auto send = buffer(n * p, d), recv = buffer(n * p, d);
  // Block j carries value(rank, j*n + i): receiver r checks sender s's block r.
  fill(send.data(), 0, n * p, rank(), 0, SMD_SUM, d);
  void *out = inplace ? send.data() : recv.data();
  SMD_OK(smd_alltoall(send.data(), out, n, d, world(), nullptr));
  for (int s = 0; s < p; ++s) expect_values(out, s * n, n, s, rank() * n, SMD_SUM, d);
}

INSTANTIATE_TEST_SUITE_P(All, Reducing,
                         ::testing::Combine(::testing::ValuesIn(kAllDatatypes),
                                            ::testing::ValuesIn(kAllOps), ::testing::Bool(),
                                            ::testing::ValuesIn(kCounts)),
                         reduce_name);
INSTANTIATE_TEST_SUITE_P(All, Moving,
                         ::testing::Combine(::testing::ValuesIn(kAllDatatypes), ::testing::Bool(),
                                            ::testing::ValuesIn(kCounts)),
                         move_name);

// Buffers from smd_mem_alloc: peers read an allgather's blocks and a
// broadcast root's input where they lie. All ranks' buffers shared, only
// even ranks' (the others stage), and in place; one round and several per
// block; fresh blocks every time, more than a peer keeps mapped.
class SharedBuffer {
 public:
  SharedBuffer(bool shared, size_t bytes) : plain_(shared ? 0 : bytes, 0xA5) {
    if (shared) {
      EXPECT_EQ(smd_mem_alloc(world(), bytes, &mem_), SMD_SUCCESS) << smd_last_error();
      if (mem_) memset(mem_, 0xA5, bytes);
    }
  }
  ~SharedBuffer() { EXPECT_EQ(smd_mem_free(mem_), SMD_SUCCESS) << smd_last_error(); }
  uint8_t *data() { return mem_ ? static_cast<uint8_t *>(mem_) : plain_.data(); }

 private:
  void *mem_ = nullptr;
  std::vector<uint8_t> plain_;
};

TEST(SharedMemory, AllgatherAndBroadcastReadInPlace) {
  const smd_datatype_t d = SMD_FLOAT32;
  const size_t es = dtype_size(d);
  int p = size();
  for (int mode = 0; mode < 3; ++mode) {  // all shared, even ranks shared, in place
    bool shared = mode != 1 || rank() % 2 == 0;
    for (size_t n : {size_t(7), size_t(10007), size_t(150001)}) {
      for (int rep = 0; rep < 4; ++rep) {
        SCOPED_TRACE("mode " + std::to_string(mode) + " count " + std::to_string(n) + " rep " +
                     std::to_string(rep));
        SharedBuffer recv(shared, n * p * es), send(shared, n * es);
        uint8_t *in = mode == 2 ? recv.data() + rank() * n * es : send.data();
        fill(in, 0, n, rank(), rep, SMD_SUM, d);
        ASSERT_EQ(smd_allgather(in, recv.data(), n, d, world(), nullptr), SMD_SUCCESS)
            << smd_last_error();
        for (int r = 0; r < p; ++r) expect_values(recv.data(), r * n, n, r, rep, SMD_SUM, d);

        int root = rep % p;
        if (rank() == root) fill(send.data(), 0, n, root, rep, SMD_SUM, d);
        uint8_t *out = mode == 2 ? send.data() : recv.data();
        ASSERT_EQ(smd_broadcast(rank() == root ? send.data() : nullptr, out, n, d, root, world(),
                                nullptr),
                  SMD_SUCCESS)
            << smd_last_error();
        expect_values(out, 0, n, root, rep, SMD_SUM, d);

        // A small broadcast of ordinary memory right after: nothing of the
        // last operation's offers may leak into it.
        uint64_t tiny[2] = {0, 0};
        int tiny_root = (root + 1) % p;
        if (rank() == tiny_root) tiny[0] = tiny[1] = 1000 + rep;
        ASSERT_EQ(smd_broadcast(tiny, tiny, 2, SMD_UINT64, tiny_root, world(), nullptr),
                  SMD_SUCCESS)
            << smd_last_error();
        EXPECT_EQ(tiny[0], uint64_t(1000 + rep));
        EXPECT_EQ(tiny[1], uint64_t(1000 + rep));
      }
    }
  }
}

// The reductions with buffers from smd_mem_alloc: peers reduce their
// slices of a member's input where it lies. All shared, even ranks shared,
// and in place (allreduce's recvbuf == sendbuf, reduce_scatter's own
// block, reduce's root); one round (every member reduces everything),
// pipelined rounds, several rounds per block; a value changed between
// repetitions, so a read of last call's input shows.
TEST(SharedMemory, ReductionsReadInPlace) {
  const smd_datatype_t d = SMD_FLOAT32;
  const size_t es = dtype_size(d);
  int p = size(), root = p - 1;
  for (int mode = 0; mode < 3; ++mode) {
    bool shared = mode != 1 || rank() % 2 == 0, inplace = mode == 2;
    for (size_t n : {size_t(7), size_t(10007), size_t(150001)}) {
      for (int rep = 0; rep < 3; ++rep) {
        SCOPED_TRACE("mode " + std::to_string(mode) + " count " + std::to_string(n) + " rep " +
                     std::to_string(rep));
        SharedBuffer send(shared, n * p * es), recv(shared, n * p * es);
        fill(send.data(), 0, n, rank(), rep, SMD_SUM, d);
        uint8_t *out = inplace ? send.data() : recv.data();
        ASSERT_EQ(smd_allreduce(send.data(), out, n, d, SMD_SUM, world(), nullptr), SMD_SUCCESS)
            << smd_last_error();
        expect_reduced(out, 0, n, rep, SMD_SUM, d);

        fill(send.data(), 0, n, rank(), rep, SMD_SUM, d);
        out = inplace && rank() == root ? send.data() : recv.data();
        ASSERT_EQ(smd_reduce(send.data(), out, n, d, SMD_SUM, root, world(), nullptr), SMD_SUCCESS)
            << smd_last_error();
        if (rank() == root) expect_reduced(out, 0, n, rep, SMD_SUM, d);

        fill(send.data(), 0, n * p, rank(), rep, SMD_SUM, d);
        out = inplace ? send.data() + rank() * n * es : recv.data();
        ASSERT_EQ(smd_reduce_scatter(send.data(), out, n, d, SMD_SUM, world(), nullptr),
                  SMD_SUCCESS)
            << smd_last_error();
        expect_reduced(out, 0, n, rep + rank() * n, SMD_SUM, d);
      }
    }
  }
}

int64_t monotonic_ns() {
  // CLOCK_MONOTONIC is one clock for every process of a machine, so the
  // ranks' stamps compare (all ranks of these tests share a machine, fake
  // nodes included).
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// No rank leaves a barrier before every rank has entered it: each rank
// stamps the clock before entering and after leaving, and every leave
// must come after every entry. One rank at a time enters late (a short
// sleep), so a barrier that let the others through would show; the check
// itself compares stamps only, so a slow machine cannot fail it.
TEST(Collectives, BarrierOrdersEverything) {
  const int p = size();
  for (int round = 0; round < 2 * p; ++round) {
    const int late = round % p;
    const bool nonblocking = round >= p;
    SCOPED_TRACE("late rank " + std::to_string(late) + (nonblocking ? " (ibarrier)" : ""));
    if (rank() == late) usleep(20000);
    int64_t stamps[2] = {monotonic_ns(), 0};
    if (nonblocking) {
      smd_request_t *req = nullptr;
      SMD_OK(smd_ibarrier(world(), nullptr, &req));
      SMD_OK(smd_request_wait(req));
      SMD_OK(smd_request_free(req));
    } else {
      SMD_OK(smd_barrier(world(), nullptr));
    }
    stamps[1] = monotonic_ns();
    std::vector<int64_t> all(2 * p);
    SMD_OK(smd_allgather(stamps, all.data(), 2, SMD_INT64, world(), nullptr));
    int64_t last_entry = 0;
    for (int r = 0; r < p; ++r) last_entry = std::max(last_entry, all[2 * r]);
    for (int r = 0; r < p; ++r)
      EXPECT_GE(all[2 * r + 1], last_entry)
          << "rank " << r << " left the barrier " << (last_entry - all[2 * r + 1]) / 1000
          << " us before the last rank entered it";
  }
  for (int i = 0; i < 50; ++i) SMD_OK(smd_barrier(world(), nullptr));
}

// Broadcast roots do not wait for their readers; their agreement is checked
// later, while readers may already be reusing the slot. Many rotating roots
// with empty and tiny counts and other collectives between them (what
// bindings' test loops do) must never report a false mismatch.
// The suite's registrations that force an algorithm say which one must
// run (SMD_TEST_EXPECT_ALGO): a forced algorithm that silently fell back
// would leave it untested; one that is unavailable must not run.
TEST(Collectives, ExpectedAlgorithmRuns) {
  const char *want = getenv("SMD_TEST_EXPECT_ALGO");
  if (!want || size() < 2) GTEST_SKIP() << "no SMD_TEST_EXPECT_ALGO, or one rank";
  const size_t n = 1 << 20;
  std::vector<float> in(n, float(rank())), out(n * size());
  smd_comm_stats_t s;
  auto last = [&] {
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    EXPECT_EQ(smd_comm_get_stats(world(), &s), SMD_SUCCESS) << smd_last_error();
    return std::string(s.last_algorithm);
  };
  ASSERT_EQ(smd_allgather(in.data(), out.data(), n, SMD_FLOAT32, world(), nullptr), SMD_SUCCESS)
      << smd_last_error();
  EXPECT_EQ(last(), want) << "allgather";
  EXPECT_EQ(out[(size() - 1) * n], float(size() - 1));
  ASSERT_EQ(smd_broadcast(rank() == 0 ? in.data() : nullptr, out.data(), n, SMD_FLOAT32, 0, world(),
                          nullptr),
            SMD_SUCCESS)
      << smd_last_error();
  EXPECT_EQ(last(), want) << "broadcast";
  EXPECT_EQ(out[n - 1], 0.0f);
  std::vector<float> blocks(n * size(), 1.0f);
  ASSERT_EQ(
      smd_reduce_scatter(blocks.data(), out.data(), n, SMD_FLOAT32, SMD_SUM, world(), nullptr),
      SMD_SUCCESS)
      << smd_last_error();
  EXPECT_EQ(last(), want) << "reduce_scatter";
  EXPECT_EQ(out[n - 1], float(size()));
}

TEST(Collectives, BroadcastRotatingRootsBackToBack) {
  int p = size();
  std::vector<uint64_t> buf(8);
  for (int i = 0; i < 3000; ++i) {
    int root = i % p;
    size_t n = static_cast<size_t>(i % 5);
    for (size_t j = 0; j < buf.size(); ++j) buf[j] = rank() == root ? uint64_t(i * 10 + j) : 0;
    ASSERT_EQ(smd_broadcast(rank() == root ? buf.data() : nullptr, buf.data(), n, SMD_UINT64, root,
                            world(), nullptr),
              SMD_SUCCESS)
        << "iteration " << i << ": " << smd_last_error();
    for (size_t j = 0; j < n; ++j) ASSERT_EQ(buf[j], uint64_t(i * 10 + j)) << "iteration " << i;
    if (i % 7 == 0) {
      ASSERT_EQ(smd_barrier(world(), nullptr), SMD_SUCCESS) << smd_last_error();
    }
  }
}

// Tests the requests, last issued first, until all are done; a request
// seen done while an earlier one is then seen still running completed out
// of issue order (testing only moves requests towards completion, so this
// never accuses a correct order). A wall-clock limit, not a count of tests,
// bounds the wait.
void expect_completion_in_issue_order(const std::vector<smd_request_t *> &reqs) {
  const int64_t limit = monotonic_ns() + int64_t(120) * 1000000000;
  size_t done_count = 0;
  bool reported = false;
  while (done_count < reqs.size()) {
    ASSERT_LT(monotonic_ns(), limit)
        << done_count << " of " << reqs.size() << " requests done after 120 s";
    size_t newest_done = 0;  // 1 + index of the newest request seen done
    done_count = 0;
    for (size_t k = reqs.size(); k-- > 0;) {
      int done = 0;
      ASSERT_EQ(smd_request_test(reqs[k], &done), SMD_SUCCESS) << smd_last_error();
      if (done) {
        ++done_count;
        if (!newest_done) newest_done = k + 1;
      } else if (newest_done && !reported) {
        ADD_FAILURE() << "request " << newest_done - 1 << " completed before request " << k
                      << ", issued earlier";
        reported = true;
      }
    }
  }
}

TEST(Collectives, NonblockingOverlapAndOrder) {
  // Several nonblocking collectives of different kinds in flight complete
  // in issue order and leave the right data.
  const size_t n = 4099;
  const int p = size();
  std::vector<std::vector<float>> in(6, std::vector<float>(n)), out(6, std::vector<float>(n));
  std::vector<float> gathered(n * p);
  std::vector<smd_request_t *> reqs(6), issued;
  smd_request_t *barrier = nullptr, *gather = nullptr;
  for (int k = 0; k < 6; ++k) {
    for (size_t i = 0; i < n; ++i) in[k][i] = static_cast<float>(rank() + k + (i % 3));
    SMD_OK(smd_iallreduce(in[k].data(), out[k].data(), n, SMD_FLOAT32, SMD_SUM, world(), nullptr,
                          &reqs[k]));
    issued.push_back(reqs[k]);
    if (k == 2) {
      SMD_OK(smd_ibarrier(world(), nullptr, &barrier));
      issued.push_back(barrier);
    }
  }
  SMD_OK(smd_iallgather(in[0].data(), gathered.data(), n, SMD_FLOAT32, world(), nullptr, &gather));
  issued.push_back(gather);
  ASSERT_NO_FATAL_FAILURE(expect_completion_in_issue_order(issued));
  for (int k = 5; k >= 0; --k) SMD_OK(smd_request_wait(reqs[k]));
  SMD_OK(smd_request_wait(barrier));
  SMD_OK(smd_request_wait(gather));
  for (int r = 0; r < p; ++r)
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(gathered[r * n + i], static_cast<float>(r + (i % 3))) << "allgather block " << r;
  SMD_OK(smd_request_free(barrier));
  SMD_OK(smd_request_free(gather));
  for (int k = 0; k < 6; ++k) {
    for (size_t i = 0; i < n; ++i) {
      float want = 0;
      for (int r = 0; r < size(); ++r) want += static_cast<float>(r + k + (i % 3));
      ASSERT_EQ(out[k][i], want) << "request " << k << " element " << i;
    }
    SMD_OK(smd_request_free(reqs[k]));
  }
}

TEST(Collectives, RequestTestAndTimeout) {
  int x = rank(), y = -1;
  smd_request_t *req = nullptr;
  SMD_OK(smd_iallreduce(&x, &y, 1, SMD_INT32, SMD_MAX, world(), nullptr, &req));
  int done = 0;
  while (!done) {
    smd_result_t r = smd_request_wait_timeout(req, 1);
    ASSERT_TRUE(r == SMD_SUCCESS || r == SMD_IN_PROGRESS) << smd_last_error();
    SMD_OK(smd_request_test(req, &done));
  }
  EXPECT_EQ(y, size() - 1);
  size_t count = 0;
  SMD_OK(smd_request_get_count(req, &count));
  EXPECT_EQ(count, 1u);
  SMD_OK(smd_request_free(req));
}

TEST(PointToPoint, RingOfMessagesAndSelf) {
  int p = size(), me = rank();
  int next = (me + 1) % p, prev = (me + p - 1) % p;
  std::vector<double> out(1000), in(1000, -1);
  for (size_t i = 0; i < out.size(); ++i) out[i] = me * 1000.0 + i;
  smd_request_t *rr = nullptr, *sr = nullptr;
  SMD_OK(smd_irecv(in.data(), in.size(), SMD_FLOAT64, prev, 7, world(), nullptr, &rr));
  SMD_OK(smd_isend(out.data(), out.size(), SMD_FLOAT64, next, 7, world(), nullptr, &sr));
  SMD_OK(smd_request_wait(rr));
  SMD_OK(smd_request_wait(sr));
  size_t got = 0;
  SMD_OK(smd_request_get_count(rr, &got));
  EXPECT_EQ(got, in.size());
  for (size_t i = 0; i < in.size(); ++i) ASSERT_EQ(in[i], prev * 1000.0 + i);
  SMD_OK(smd_request_free(rr));
  SMD_OK(smd_request_free(sr));
  // A message to self.
  int a = 42, b = 0;
  SMD_OK(smd_send(&a, 1, SMD_INT32, me, 3, world(), nullptr));
  SMD_OK(smd_recv(&b, 1, SMD_INT32, me, 3, world(), nullptr));
  EXPECT_EQ(b, 42);
}

TEST(PointToPoint, TagsMatchOutOfOrderAndShortMessages) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  if (rank() == 0) {
    int a = 1, b = 2;
    SMD_OK(smd_send(&a, 1, SMD_INT32, 1, 100, world(), nullptr));
    SMD_OK(smd_send(&b, 1, SMD_INT32, 1, 200, world(), nullptr));
    std::vector<int> big(5, 9);
    SMD_OK(smd_send(big.data(), 3, SMD_INT32, 1, 300, world(), nullptr));  // shorter than posted
  } else if (rank() == 1) {
    int a = 0, b = 0;
    SMD_OK(smd_recv(&b, 1, SMD_INT32, 0, 200, world(), nullptr));  // the later tag first
    SMD_OK(smd_recv(&a, 1, SMD_INT32, 0, 100, world(), nullptr));
    EXPECT_EQ(a, 1);
    EXPECT_EQ(b, 2);
    std::vector<int> big(5, 0);
    smd_request_t *req = nullptr;
    SMD_OK(smd_irecv(big.data(), 5, SMD_INT32, 0, 300, world(), nullptr, &req));
    SMD_OK(smd_request_wait(req));
    size_t got = 0;
    SMD_OK(smd_request_get_count(req, &got));
    EXPECT_EQ(got, 3u);
    SMD_OK(smd_request_free(req));
  }
  SMD_OK(smd_barrier(world(), nullptr));
}

TEST(Communicators, SplitDupGroupQueries) {
  int p = size(), me = rank();
  smd_comm_t *halves = nullptr, *dup = nullptr;
  SMD_OK(smd_comm_split(world(), me % 2, -me, &halves));  // keys reverse the order
  int hr = -1, hs = -1;
  SMD_OK(smd_comm_rank(halves, &hr));
  SMD_OK(smd_comm_size(halves, &hs));
  EXPECT_EQ(hs, (p + 1 - me % 2) / 2);
  int sum = 0, one = 1;
  SMD_OK(smd_allreduce(&one, &sum, 1, SMD_INT32, SMD_SUM, halves, nullptr));
  EXPECT_EQ(sum, hs);
  int wr = -1;
  SMD_OK(smd_comm_world_rank(halves, hr, &wr));
  EXPECT_EQ(wr, me);
  SMD_OK(smd_comm_dup(world(), &dup));
  int dr = -1;
  SMD_OK(smd_comm_rank(dup, &dr));
  EXPECT_EQ(dr, me);
  // Collectives on the duplicate and the parent do not interfere.
  int x = me, y = 0, z = 0;
  smd_request_t *r1 = nullptr, *r2 = nullptr;
  SMD_OK(smd_iallreduce(&x, &y, 1, SMD_INT32, SMD_SUM, dup, nullptr, &r1));
  SMD_OK(smd_iallreduce(&x, &z, 1, SMD_INT32, SMD_MAX, world(), nullptr, &r2));
  SMD_OK(smd_request_wait(r1));
  SMD_OK(smd_request_wait(r2));
  EXPECT_EQ(y, p * (p - 1) / 2);
  EXPECT_EQ(z, p - 1);
  smd_request_free(r1);
  smd_request_free(r2);
  // Opting out.
  smd_comm_t *none = nullptr;
  SMD_OK(smd_comm_split(world(), me == 0 ? SMD_UNDEFINED : 1, 0, &none));
  EXPECT_EQ(none == nullptr, me == 0);
  if (none) SMD_OK(smd_comm_destroy(none));
  // A group of the even ranks, created by them only.
  std::vector<int> evens;
  for (int r = 0; r < p; r += 2) evens.push_back(r);
  if (me % 2 == 0) {
    smd_comm_t *g = nullptr;
    SMD_OK(smd_comm_create_group(world(), evens.data(), static_cast<int>(evens.size()), &g));
    int gs = 0;
    SMD_OK(smd_comm_size(g, &gs));
    EXPECT_EQ(gs, static_cast<int>(evens.size()));
    int s = 0;
    SMD_OK(smd_allreduce(&one, &s, 1, SMD_INT32, SMD_SUM, g, nullptr));
    EXPECT_EQ(s, gs);
    SMD_OK(smd_comm_destroy(g));
  }
  int ls = 0, lr = -1, node = -1, nodes = 0;
  SMD_OK(smd_comm_local_size(world(), &ls));
  SMD_OK(smd_comm_local_rank(world(), &lr));
  SMD_OK(smd_comm_node_index(world(), &node));
  SMD_OK(smd_comm_node_count(world(), &nodes));
  EXPECT_GE(ls, 1);
  EXPECT_LT(lr, ls);
  EXPECT_LT(node, nodes);
  SMD_OK(smd_comm_destroy(halves));
  SMD_OK(smd_comm_destroy(dup));
  SMD_OK(smd_barrier(world(), nullptr));
}

}  // namespace

int main(int argc, char **argv) {
  mptest::install(&argc, argv);
  return RUN_ALL_TESTS();
}
