// Bad input: every call answers with a clear error code and message, never
// a crash or a hang, and the world stays usable afterwards. Runs under
// smdrun with 1 and 2 ranks.
#include <gtest/gtest.h>
#include <smd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "../coll/mp_env.h"

using mptest::rank;
using mptest::size;
using mptest::world;

namespace {

// Set by the runs over point-to-point algorithms, where the call check
// reaches every rank: each one ends with SMD_ERR_MISMATCH, whatever it ran.
bool every_rank_learns() {
  const char *v = getenv("SMD_TEST_EVERY_RANK_MISMATCH");
  return v && *v == '1';
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The call fails with `code` and a message containing `words`.
#define EXPECT_FAILS(call, code, words)                                                          \
  do {                                                                                           \
    smd_result_t r_ = (call);                                                                    \
    EXPECT_EQ(r_, code) << #call << " -> " << smd_result_string(r_) << ": " << smd_last_error(); \
    EXPECT_NE(std::string(smd_last_error()).find(words), std::string::npos)                      \
        << "message was: " << smd_last_error();                                                  \
  } while (0)

TEST(BadInput, NullBufferWithCount) {
  float x[4] = {0};
  EXPECT_FAILS(smd_allreduce(nullptr, x, 4, SMD_FLOAT32, SMD_SUM, world(), nullptr),
               SMD_ERR_INVALID_ARGUMENT, "sendbuf is NULL");
  EXPECT_FAILS(smd_allgather(x, nullptr, 1, SMD_FLOAT32, world(), nullptr),
               SMD_ERR_INVALID_ARGUMENT, "recvbuf is NULL");
  EXPECT_FAILS(smd_send(nullptr, 3, SMD_INT32, 0, 0, world(), nullptr), SMD_ERR_INVALID_ARGUMENT,
               "buf is NULL");
  // NULL with count 0 is fine.
  SMD_OK(smd_allreduce(nullptr, nullptr, 0, SMD_FLOAT32, SMD_SUM, world(), nullptr));
}

TEST(BadInput, OverflowingCount) {
  float x = 0;
  EXPECT_FAILS(smd_allreduce(&x, &x, SIZE_MAX / 2, SMD_FLOAT32, SMD_SUM, world(), nullptr),
               SMD_ERR_INVALID_ARGUMENT, "overflows");
  EXPECT_FAILS(smd_allgather(&x, &x, SIZE_MAX / 8, SMD_FLOAT64, world(), nullptr),
               SMD_ERR_INVALID_ARGUMENT, "overflows");
}

TEST(BadInput, UnknownDatatypeAndOp) {
  int x = 0, y = 0;
  EXPECT_FAILS(smd_allreduce(&x, &y, 1, static_cast<smd_datatype_t>(99), SMD_SUM, world(), nullptr),
               SMD_ERR_INVALID_ARGUMENT, "unknown datatype 99");
  EXPECT_FAILS(smd_allreduce(&x, &y, 1, static_cast<smd_datatype_t>(-1), SMD_SUM, world(), nullptr),
               SMD_ERR_INVALID_ARGUMENT, "unknown datatype");
  EXPECT_FAILS(smd_allreduce(&x, &y, 1, SMD_INT32, static_cast<smd_op_t>(42), world(), nullptr),
               SMD_ERR_INVALID_ARGUMENT, "unknown reduction op 42");
  size_t sz = 0;
  EXPECT_FAILS(smd_datatype_size(static_cast<smd_datatype_t>(10), &sz), SMD_ERR_INVALID_ARGUMENT,
               "unknown datatype");
}

TEST(BadInput, RootOutOfRange) {
  int x = 0, y = 0;
  EXPECT_FAILS(smd_broadcast(&x, &y, 1, SMD_INT32, size(), world(), nullptr),
               SMD_ERR_INVALID_ARGUMENT, "root");
  EXPECT_FAILS(smd_reduce(&x, &y, 1, SMD_INT32, SMD_SUM, -1, world(), nullptr),
               SMD_ERR_INVALID_ARGUMENT, "root -1");
  EXPECT_FAILS(smd_send(&x, 1, SMD_INT32, size(), 0, world(), nullptr), SMD_ERR_INVALID_ARGUMENT,
               "peer");
  EXPECT_FAILS(smd_send(&x, 1, SMD_INT32, 0, SMD_TAG_MAX + 1, world(), nullptr),
               SMD_ERR_INVALID_ARGUMENT, "tag");
}

TEST(BadInput, StreamsAreNotSupportedYet) {
  int x = 0;
  EXPECT_FAILS(
      smd_allreduce(&x, &x, 1, SMD_INT32, SMD_SUM, world(), reinterpret_cast<smd_stream_t>(0x10)),
      SMD_ERR_NOT_SUPPORTED, "stream");
}

TEST(BadInput, PartialOverlap) {
  std::vector<int> b(16);
  EXPECT_FAILS(smd_allreduce(b.data(), b.data() + 1, 8, SMD_INT32, SMD_SUM, world(), nullptr),
               SMD_ERR_INVALID_ARGUMENT, "overlap");
}

TEST(BadInput, UseAfterDestroy) {
  smd_comm_t *dup = nullptr;
  SMD_OK(smd_comm_dup(world(), &dup));
  SMD_OK(smd_comm_destroy(dup));
  int x = 0, r = 0;
  EXPECT_FAILS(smd_allreduce(&x, &x, 1, SMD_INT32, SMD_SUM, dup, nullptr), SMD_ERR_INVALID_USAGE,
               "not a live communicator");
  EXPECT_FAILS(smd_comm_rank(dup, &r), SMD_ERR_INVALID_USAGE, "not a live communicator");
  EXPECT_FAILS(smd_comm_destroy(dup), SMD_ERR_INVALID_USAGE, "not a live communicator");
  EXPECT_FAILS(smd_allreduce(&x, &x, 1, SMD_INT32, SMD_SUM, nullptr, nullptr),
               SMD_ERR_INVALID_ARGUMENT, "comm is NULL");
  smd_request_t *req = nullptr;
  SMD_OK(smd_ibarrier(world(), nullptr, &req));
  SMD_OK(smd_request_free(req));
  EXPECT_FAILS(smd_request_wait(req), SMD_ERR_INVALID_USAGE, "not live");
  EXPECT_FAILS(smd_request_free(req), SMD_ERR_INVALID_USAGE, "not live");
}

TEST(BadInput, SharedMemory) {
  void *mem = reinterpret_cast<void *>(1);
  EXPECT_FAILS(smd_mem_alloc(nullptr, 64, &mem), SMD_ERR_INVALID_ARGUMENT, "comm is NULL");
  EXPECT_EQ(mem, nullptr);
  EXPECT_FAILS(smd_mem_alloc(world(), 0, &mem), SMD_ERR_INVALID_ARGUMENT, "bytes is 0");
  EXPECT_FAILS(smd_mem_alloc(world(), 64, nullptr), SMD_ERR_INVALID_ARGUMENT, "ptr is NULL");
  EXPECT_FAILS(smd_mem_alloc(world(), SIZE_MAX / 2, &mem), SMD_ERR_NO_MEMORY, "bytes");
  int x = 0;
  EXPECT_FAILS(smd_mem_free(&x), SMD_ERR_INVALID_ARGUMENT, "not allocated by smd_mem_alloc");
  SMD_OK(smd_mem_alloc(world(), 4096, &mem));
  ASSERT_NE(mem, nullptr);
  for (int i = 0; i < 4096; ++i) ASSERT_EQ(static_cast<char *>(mem)[i], 0) << "byte " << i;
  static_cast<char *>(mem)[4095] = 1;
  SMD_OK(smd_mem_free(mem));
  EXPECT_FAILS(smd_mem_free(mem), SMD_ERR_INVALID_ARGUMENT, "freed already");
  SMD_OK(smd_mem_free(nullptr));
}

// A call racing with the destruction of its communicator on another thread
// either runs or reports a dead handle: never a crash (the sanitizer run
// would see a read of the freed handle).
TEST(BadInput, UseWhileAnotherThreadDestroys) {
  for (int round = 0; round < 20; ++round) {
    smd_comm_t *dup = nullptr;
    SMD_OK(smd_comm_dup(world(), &dup));
    std::atomic<bool> started{false};
    std::atomic<int> bad{0};
    std::thread user([&] {
      for (int i = 0; i < 2000; ++i) {
        int r = -1;
        smd_result_t rc = smd_comm_rank(dup, &r);
        started = true;
        if (rc != SMD_SUCCESS && rc != SMD_ERR_INVALID_USAGE) ++bad;
        if (rc == SMD_SUCCESS && r != rank()) ++bad;
      }
    });
    while (!started) std::this_thread::yield();
    SMD_OK(smd_comm_destroy(dup));
    user.join();
    EXPECT_EQ(bad.load(), 0) << "round " << round;
  }
}

TEST(BadInput, OptionStructs) {
  smd_init_options_t o = SMD_INIT_OPTIONS_INIT;
  smd_comm_t *c = nullptr;
  o.struct_size = 4;
  EXPECT_FAILS(smd_comm_init(&o, &c), SMD_ERR_INVALID_ARGUMENT, "struct_size");
  SMD_OK(smd_init_options_init(&o));
  o.version = 77;
  EXPECT_FAILS(smd_comm_init(&o, &c), SMD_ERR_INVALID_ARGUMENT, "version 77");
  SMD_OK(smd_init_options_init(&o));
  o.rank = 5;
  o.world_size = 2;
  EXPECT_FAILS(smd_comm_init(&o, &c), SMD_ERR_INVALID_ARGUMENT, "rank 5");
  EXPECT_EQ(c, nullptr);
  // One rank past the largest world collective tags have room for
  // (docs/SCALE.md, Limits): refused before any rendezvous.
  o.rank = 0;
  o.world_size = 65537;
  EXPECT_FAILS(smd_comm_init(&o, &c), SMD_ERR_INVALID_ARGUMENT, "65537 ranks is larger");
  EXPECT_EQ(c, nullptr);
  EXPECT_FAILS(smd_comm_init(nullptr, nullptr), SMD_ERR_INVALID_ARGUMENT, "world is NULL");
}

TEST(BadInput, TruncatedReceive) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  std::vector<int> data(10, 3);
  if (rank() == 0) {
    SMD_OK(smd_send(data.data(), 10, SMD_INT32, 1, 5, world(), nullptr));
  } else if (rank() == 1) {
    // Says what the caller did and what to do, in the caller's terms: the
    // peer, the tag given, the buffer; no wire tag.
    EXPECT_FAILS(smd_recv(data.data(), 5, SMD_INT32, 0, 5, world(), nullptr), SMD_ERR_TRUNCATED,
                 "smd_recv: receive from rank 0 (tag 5): the message sent is larger than the "
                 "20-byte buffer (5 x int32); receive with a count of at least the sender's");
    EXPECT_EQ(std::string(smd_last_error()).find("0x"), std::string::npos) << smd_last_error();
  }
  SMD_OK(smd_barrier(world(), nullptr));
}

TEST(BadInput, TruncatedReceiveNonblocking) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  std::vector<int> data(10, 3);
  if (rank() == 0) {
    SMD_OK(smd_send(data.data(), 10, SMD_INT32, 1, 6, world(), nullptr));
  } else if (rank() == 1) {
    // The request calls that report it add nothing of their own: the
    // message names the receive, not smd_request_wait_timeout.
    smd_request_t *req = nullptr;
    SMD_OK(smd_irecv(data.data(), 4, SMD_INT32, 0, 6, world(), nullptr, &req));
    smd_result_t r;
    while ((r = smd_request_wait_timeout(req, 100)) == SMD_IN_PROGRESS) {
    }
    EXPECT_EQ(r, SMD_ERR_TRUNCATED);
    std::string msg = smd_last_error();
    EXPECT_EQ(msg.rfind("receive from rank 0 (tag 6): the message sent is larger than the "
                        "16-byte buffer (4 x int32)",
                        0),
              0u)
        << msg;
    EXPECT_EQ(msg.find("smd_request"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("0x"), std::string::npos) << msg;
    EXPECT_EQ(smd_request_free(req), SMD_ERR_TRUNCATED);  // free returns its result
  }
  SMD_OK(smd_barrier(world(), nullptr));
}

TEST(Mismatch, CountsDifferAcrossRanks) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  // 10 vs 20: both staged in small buffers; 2 vs 1000: rank 0's data rides
  // in its descriptor, the others' in buffers (rank 0 must not wait for a
  // descriptor post the others never make).
  for (auto counts : {std::pair<size_t, size_t>{10, 20}, {2, 1000}}) {
    // On a duplicate: a failed collective leaves its communicator unusable.
    smd_comm_t *c = nullptr;
    SMD_OK(smd_comm_dup(world(), &c));
    std::vector<float> in(1000, 1.0f), out(1000);
    size_t n = rank() == 0 ? counts.first : counts.second;
    EXPECT_FAILS(smd_allreduce(in.data(), out.data(), n, SMD_FLOAT32, SMD_SUM, c, nullptr),
                 SMD_ERR_MISMATCH, "different arguments");
    // Over point-to-point messages the agreement check names both calls.
    std::string why = smd_last_error();
    if (why.find("different collectives") != std::string::npos) {
      EXPECT_NE(why.find("allreduce of " + std::to_string(counts.first) + " float32"),
                std::string::npos)
          << why;
      EXPECT_NE(why.find("allreduce of " + std::to_string(counts.second) + " float32"),
                std::string::npos)
          << why;
    }
    // The communicator stays failed, and says why.
    EXPECT_FAILS(smd_barrier(c, nullptr), SMD_ERR_MISMATCH, "earlier failure");
    smd_result_t async = SMD_SUCCESS;
    SMD_OK(smd_comm_get_async_error(c, &async));
    EXPECT_EQ(async, SMD_ERR_MISMATCH);
    SMD_OK(smd_comm_destroy(c));
    SMD_OK(smd_barrier(world(), nullptr));
  }
}

TEST(Mismatch, DatatypeOpRootAndKind) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  std::vector<float> in(8, 1.0f), out(8);
  struct Case {
    const char *what;
    int which;
  } cases[] = {{"dtype", 0}, {"op", 1}, {"root", 2}, {"kind", 3}};
  for (auto &k : cases) {
    smd_comm_t *c = nullptr;
    SMD_OK(smd_comm_dup(world(), &c));
    smd_result_t r;
    bool odd = rank() % 2;
    if (k.which == 0)
      r = smd_allreduce(in.data(), out.data(), 4, odd ? SMD_INT32 : SMD_FLOAT32, SMD_SUM, c,
                        nullptr);
    else if (k.which == 1)
      r = smd_allreduce(in.data(), out.data(), 4, SMD_FLOAT32, odd ? SMD_MAX : SMD_SUM, c, nullptr);
    else if (k.which == 2)
      r = smd_broadcast(in.data(), out.data(), 4, SMD_FLOAT32, odd ? 1 : 0, c, nullptr);
    else
      r = odd ? smd_broadcast(in.data(), out.data(), 4, SMD_FLOAT32, 0, c, nullptr)
              : smd_allreduce(in.data(), out.data(), 4, SMD_FLOAT32, SMD_SUM, c, nullptr);
    if (k.which == 2 && !every_rank_learns()) {
      // On the arena a broadcast root waits for no one: two ranks that each think they
      // are the root find out at their next collective on the
      // communicator. A rank that agreed with its root (rank 2 of 3) got
      // that root's data and may see no error at all.
      if (r == SMD_SUCCESS) r = smd_barrier(c, nullptr);
      bool a_root = rank() == (odd ? 1 : 0);
      if (a_root) EXPECT_EQ(r, SMD_ERR_MISMATCH) << k.what << ": " << smd_last_error();
      else EXPECT_TRUE(r == SMD_SUCCESS || r == SMD_ERR_MISMATCH) << smd_last_error();
    } else {
      EXPECT_EQ(r, SMD_ERR_MISMATCH) << k.what << ": " << smd_last_error();
    }
    SMD_OK(smd_comm_destroy(c));
  }
  SMD_OK(smd_barrier(world(), nullptr));
}

// Roots and counts both differ (10 elements from root 0 on rank 0, 100000
// from root 1 on the others): rank 0 sees the mismatch at once, and the
// others must learn it from rank 0 (the store, the poison message), not
// wait for SMD_TIMEOUT (120 s under these tests).
TEST(Mismatch, BroadcastRootsAndCountsEndEverywhere) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  smd_comm_t *c = nullptr;
  SMD_OK(smd_comm_dup(world(), &c));
  std::vector<float> buf(100000, 1.0f);
  auto t0 = std::chrono::steady_clock::now();
  smd_result_t r = rank() == 0
                       ? smd_broadcast(buf.data(), buf.data(), 10, SMD_FLOAT32, 0, c, nullptr)
                       : smd_broadcast(buf.data(), buf.data(), 100000, SMD_FLOAT32, 1, c, nullptr);
  // A root that returned before anyone could tell it finds out at its
  // next call on the communicator.
  if (r == SMD_SUCCESS) r = smd_barrier(c, nullptr);
  EXPECT_EQ(r, SMD_ERR_MISMATCH) << smd_last_error();
  EXPECT_LT(seconds_since(t0), 60.0) << "learnt only at the timeout: " << smd_last_error();
  SMD_OK(smd_comm_destroy(c));
  SMD_OK(smd_barrier(world(), nullptr));
}

uint64_t collectives_run(smd_comm_t *c) {
  smd_comm_stats_t s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  EXPECT_EQ(smd_comm_get_stats(c, &s), SMD_SUCCESS) << smd_last_error();
  return s.collectives;
}

// smd_comm_abort on rank 0 while its allreduce waits: rank 0 gets
// SMD_ERR_ABORTED, and so does every other rank's matching allreduce (or
// at the latest its next call), long before SMD_TIMEOUT, even where rank
// 0's data had already left. No sleeps order it: rank 0 aborts once its
// statistics count the allreduce as started (the peers have not called
// yet, so it waits), and the peers call only after a world barrier that
// rank 0 enters once its allreduce has returned.
TEST(Failure, AbortReachesEveryRank) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  smd_comm_t *c = nullptr;
  SMD_OK(smd_comm_dup(world(), &c));
  int x = 1, y = 0;
  auto t0 = std::chrono::steady_clock::now();
  smd_result_t r;
  if (rank() == 0) {
    uint64_t before = collectives_run(c);
    std::thread aborter([c, before] {
      while (collectives_run(c) == before) std::this_thread::yield();
      smd_comm_abort(c);
    });
    r = smd_allreduce(&x, &y, 1, SMD_INT32, SMD_SUM, c, nullptr);
    aborter.join();
    SMD_OK(smd_barrier(world(), nullptr));
  } else {
    SMD_OK(smd_barrier(world(), nullptr));
    r = smd_allreduce(&x, &y, 1, SMD_INT32, SMD_SUM, c, nullptr);
    bool neighbour = rank() == 1 || rank() == size() - 1;
    if (r == SMD_SUCCESS && !neighbour) r = smd_barrier(c, nullptr);
  }
  EXPECT_EQ(r, SMD_ERR_ABORTED) << smd_last_error();
  EXPECT_LT(seconds_since(t0), 60.0) << smd_last_error();
  SMD_OK(smd_comm_destroy(c));
  SMD_OK(smd_barrier(world(), nullptr));
}

TEST(Messages, CarryCallAndPlace) {
  int x = 0;
  EXPECT_EQ(smd_allreduce(&x, &x, 1, SMD_INT32, static_cast<smd_op_t>(9), world(), nullptr),
            SMD_ERR_INVALID_ARGUMENT);
  std::string m = smd_last_error();
  EXPECT_EQ(m.rfind("smd_allreduce: ", 0), 0u) << m;
  SMD_OK(smd_barrier(world(), nullptr));
  EXPECT_STREQ(smd_last_error(), "");
  EXPECT_STREQ(smd_result_string(SMD_ERR_TIMEOUT), "SMD_ERR_TIMEOUT");
  EXPECT_STREQ(smd_result_string(static_cast<smd_result_t>(1234)), "SMD_ERR_UNKNOWN");
  int major = -1;
  SMD_OK(smd_get_version(&major, nullptr, nullptr));
  EXPECT_EQ(major, SMD_VERSION_MAJOR);
}

TEST(World, StillWorksAfterAllThat) {
  int one = 1, sum = 0;
  SMD_OK(smd_allreduce(&one, &sum, 1, SMD_INT32, SMD_SUM, world(), nullptr));
  EXPECT_EQ(sum, size());
}

}  // namespace

int main(int argc, char **argv) {
  mptest::install(&argc, argv);
  return RUN_ALL_TESTS();
}
