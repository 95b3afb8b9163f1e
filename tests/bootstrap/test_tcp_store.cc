// The TCP store as ranks use it: server and clients in threads of this
// process, and clients in forked processes for crash detection.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <latch>
#include <memory>
#include <thread>

#include "core/bootstrap/tcp_store_client.h"
#include "core/bootstrap/tcp_store_server.h"
#include "expect_error.h"
#include "raw_socket.h"

namespace smd {
namespace {

constexpr char kToken[] = "test-job";
// How long a wait that must succeed may take: generous, so that only a
// wait that would never end fails, however slow or busy the machine.
constexpr int64_t kWaitMs = 60000;

std::unique_ptr<TcpStoreClient> join(int port, int rank, int world,
                                     const std::string &token = kToken,
                                     int64_t connect_ms = kWaitMs) {
  return std::make_unique<TcpStoreClient>("127.0.0.1", port, token, rank, world,
                                          Deadline::after_ms(connect_ms), kWaitMs);
}

Bytes bytes(const std::string &s) { return Bytes(s.begin(), s.end()); }
std::string text(const Bytes &b) { return std::string(b.begin(), b.end()); }

int count_entries(const char *dir) {
  int n = 0;
  if (DIR *d = opendir(dir)) {
    while (readdir(d)) ++n;
    closedir(d);
  }
  return n;
}

TEST(TcpStore, SetGetAddCheck) {
  TcpStoreServer server("", 0, kToken, 2);
  ASSERT_GT(server.port(), 0);
  auto a = join(server.port(), 0, 2);
  auto b = join(server.port(), 1, 2);
  EXPECT_EQ(a->describe(), "tcp store 127.0.0.1:" + std::to_string(server.port()));

  a->set("addr/0", bytes("hello"));
  EXPECT_EQ(text(b->get("addr/0", Deadline::after_ms(kWaitMs))), "hello");
  b->set("addr/0", bytes("replaced"));
  EXPECT_EQ(text(a->get("addr/0", Deadline::after_ms(kWaitMs))), "replaced");

  EXPECT_EQ(a->add("count", 2), 2);
  EXPECT_EQ(b->add("count", 3), 5);
  EXPECT_EQ(b->add("count", -6), -1);
  EXPECT_EQ(text(a->get("count", Deadline::after_ms(kWaitMs))), "-1");

  auto flags = a->check({"addr/0", "nope", "count"});
  ASSERT_TRUE(flags.has_value());
  EXPECT_EQ(*flags, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(*a->check({}), std::vector<bool>{});
  EXPECT_TRUE(a->failed_ranks().empty());
  EXPECT_EQ(server.connected_ranks(), (std::vector<int>{0, 1}));
}

TEST(TcpStore, BinaryKeysAndLargeValues) {
  TcpStoreServer server("127.0.0.1", 0, kToken, 1);
  auto c = join(server.port(), 0, 1);
  std::string key("k\0\xff", 3);
  Bytes big(3 << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 7);
  c->set(key, big);
  EXPECT_EQ(c->get(key, Deadline::after_ms(kWaitMs)), big);
  c->set("empty", {});
  EXPECT_TRUE(c->get("empty", Deadline::after_ms(kWaitMs)).empty());
}

TEST(TcpStore, AddOnTextIsRefusedButTheConnectionLives) {
  TcpStoreServer server("", 0, kToken, 1);
  auto c = join(server.port(), 0, 1);
  c->set("name", bytes("not a number"));
  EXPECT_SMD_ERROR(SMD_ERR_INVALID_USAGE, "not an integer", c->add("name", 1));
  EXPECT_EQ(c->add("n", INT64_MAX), INT64_MAX);
  EXPECT_SMD_ERROR(SMD_ERR_INVALID_USAGE, "overflow", c->add("n", 1));
  EXPECT_EQ(c->add("other", 1), 1);
}

TEST(TcpStore, GetWaitsForALaterSet) {
  TcpStoreServer server("", 0, kToken, 2);
  auto a = join(server.port(), 0, 2);
  auto b = join(server.port(), 1, 2);
  std::string got;
  std::atomic<int64_t> returned_at{0};
  std::thread waiter([&] {
    got = text(a->get("late", Deadline::after_ms(kWaitMs)));
    returned_at = now_ms();
  });
  // Most likely the get is waiting by now; if the thread started late, the
  // get finds the key at once, and the checks below hold all the same.
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  int64_t set_at = now_ms();
  EXPECT_EQ(returned_at.load(), 0) << "the get returned before the key was set";
  b->set("late", bytes("finally"));
  waiter.join();
  EXPECT_EQ(got, "finally");
  EXPECT_GE(returned_at.load(), set_at);
}

TEST(TcpStore, ManyWaitersOnOneKeyAndNoDeadline) {
  TcpStoreServer server("", 0, kToken, 5);
  std::vector<std::unique_ptr<TcpStoreClient>> c;
  for (int r = 0; r < 5; ++r) c.push_back(join(server.port(), r, 5));
  std::vector<std::thread> waiters;
  std::atomic<int> ok{0};
  for (int r = 1; r < 5; ++r)
    waiters.emplace_back([&, r] {
      if (text(c[r]->get("go", r % 2 ? Deadline::never() : Deadline::after_ms(kWaitMs))) == "now")
        ++ok;
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  c[0]->set("go", bytes("now"));
  for (auto &t : waiters) t.join();
  EXPECT_EQ(ok.load(), 4);
}

TEST(TcpStore, GetTimeoutNamesTheKey) {
  TcpStoreServer server("", 0, kToken, 1);
  auto c = join(server.port(), 0, 1);
  int64_t t0 = now_ms();
  std::string msg =
      test::error_of(SMD_ERR_TIMEOUT, [&] { c->get("rank3/address", Deadline::after_ms(200)); });
  int64_t took = now_ms() - t0;
  EXPECT_NE(msg.find("waiting for key 'rank3/address'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tcp store 127.0.0.1:"), std::string::npos) << msg;
  EXPECT_GE(took, 150);
  EXPECT_LT(took, 3000);
  // A deadline already past asks without waiting.
  EXPECT_SMD_ERROR(SMD_ERR_TIMEOUT, "rank3/address",
                   c->get("rank3/address", Deadline::after_ms(0)));
  // The connection is still good after a timeout.
  c->set("rank3/address", bytes("x"));
  EXPECT_EQ(text(c->get("rank3/address", Deadline::after_ms(0))), "x");
}

TEST(TcpStore, SixtyFourClientsJoinAtOnce) {
  constexpr int kRanks = 64;
  TcpStoreServer server("", 0, kToken, kRanks);
  std::latch start(kRanks);
  std::atomic<int> done{0};
  std::vector<std::thread> ranks;
  std::vector<std::string> errors(kRanks);
  for (int r = 0; r < kRanks; ++r)
    ranks.emplace_back([&, r] {
      try {
        start.arrive_and_wait();
        auto c = join(server.port(), r, kRanks, kToken, 20000);
        c->set("addr/" + std::to_string(r), bytes("rank" + std::to_string(r)));
        c->add("joined", 1);
        for (int p = 0; p < kRanks; ++p) {
          std::string v = text(c->get("addr/" + std::to_string(p), Deadline::after_ms(kWaitMs)));
          if (v != "rank" + std::to_string(p)) throw std::runtime_error("wrong value " + v);
        }
        c->goodbye();
        ++done;
      } catch (const std::exception &e) {
        errors[r] = e.what();
      }
    });
  for (auto &t : ranks) t.join();
  for (int r = 0; r < kRanks; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
  EXPECT_EQ(done.load(), kRanks);
  EXPECT_TRUE(server.wait_for_clients_to_leave(Deadline::after_ms(kWaitMs)));
  EXPECT_TRUE(server.failed_ranks().empty());
  auto check = join(server.port(), 0, kRanks);
  EXPECT_EQ(text(check->get("joined", Deadline::after_ms(kWaitMs))), "64");
}

TEST(TcpStore, OneClientSharedByThreads) {
  TcpStoreServer server("", 0, kToken, 1);
  auto c = join(server.port(), 0, 1);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) c->add("n", 1);
    });
  for (auto &t : threads) t.join();
  EXPECT_EQ(c->add("n", 0), 1600);
}

TEST(TcpStore, WrongTokenIsRefused) {
  TcpStoreServer server("", 0, kToken, 2);
  std::string expect = "store at 127.0.0.1:" + std::to_string(server.port()) +
                       " refused this rank: job token mismatch (another job owns this port?)";
  std::string msg =
      test::error_of(SMD_ERR_BOOTSTRAP, [&] { join(server.port(), 0, 2, "other-job"); });
  EXPECT_EQ(msg, expect);
  // The store still serves its own job.
  auto c = join(server.port(), 0, 2);
  c->set("k", bytes("v"));
  EXPECT_TRUE(server.failed_ranks().empty());
}

// smd_comm_join's connection: HELLO with world size 0 and rank -1 gets an
// id past the world's ranks, a fresh one each time; a joiner that leaves
// without goodbye is counted failed under that id; one that claims a
// world rank is refused.
TEST(TcpStore, JoinersGetIdsOfTheirOwn) {
  TcpStoreServer server("", 0, kToken, 2);
  auto rank0 = join(server.port(), 0, 2);
  auto a = join(server.port(), -1, wire::kJoinerHello);
  auto b = join(server.port(), -1, wire::kJoinerHello);
  EXPECT_EQ(a->store_id(), 2);
  EXPECT_EQ(b->store_id(), 3);
  a->set("k", bytes("from a"));
  EXPECT_EQ(text(b->get("k", Deadline::after_ms(kWaitMs))), "from a");
  b.reset();  // no goodbye: failed
  // The server sees the close soon; wait for it, bounded.
  for (int i = 0; i < 20000 && rank0->failed_ranks().empty(); ++i) usleep(1000);
  EXPECT_EQ(rank0->failed_ranks(), std::vector<int>{3});
  EXPECT_EQ(join(server.port(), -1, wire::kJoinerHello)->store_id(), 4);  // ids are not reused
  int fd = test::raw_connect(server.port());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(test::raw_send(fd, test::hello_frame(kToken, 1, wire::kJoinerHello)));
  auto reply = test::raw_reply(fd);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->op, wire::Op::kError);
  EXPECT_EQ(reply->reason, "a joining process claims rank 1, one of the world's first 2");
  close(fd);
  EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "job token mismatch",
                   join(server.port(), -1, wire::kJoinerHello, "other-job"));
}

TEST(TcpStore, WorldSizeAndRankMustFit) {
  TcpStoreServer server("", 0, kToken, 4);
  EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "world size 8 is not the store's 4",
                   join(server.port(), 5, 8));
  EXPECT_SMD_ERROR(SMD_ERR_INVALID_ARGUMENT, "rank 4 is not in a world of 4 ranks",
                   join(server.port(), 4, 4));
  // The server checks too, for clients that do not.
  int fd = test::raw_connect(server.port());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(test::raw_send(fd, test::hello_frame(kToken, 7, 4)));
  auto reply = test::raw_reply(fd);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->op, wire::Op::kError);
  EXPECT_EQ(reply->reason, "rank 7 is outside the world of 4 ranks");
  EXPECT_TRUE(test::closed_by_peer(fd));
  close(fd);
}

TEST(TcpStore, DuplicateLiveRankIsRefused) {
  TcpStoreServer server("", 0, kToken, 2);
  auto first = join(server.port(), 1, 2);
  EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "rank 1 is already connected", join(server.port(), 1, 2));
  first->goodbye();
  auto again = join(server.port(), 1, 2);  // after goodbye the rank may return
  again->set("k", bytes("v"));
  EXPECT_TRUE(server.failed_ranks().empty());
}

TEST(TcpStore, ProtocolVersionMismatchIsRefused) {
  TcpStoreServer server("", 0, kToken, 2);
  int fd = test::raw_connect(server.port());
  ASSERT_TRUE(test::raw_send(fd, test::hello_frame(kToken, 0, 2, 99)));
  auto reply = test::raw_reply(fd);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->op, wire::Op::kError);
  EXPECT_NE(reply->reason.find("protocol version 99"), std::string::npos) << reply->reason;
  close(fd);
}

TEST(TcpStore, BindFailureSaysWhy) {
  TcpStoreServer first("", 0, kToken, 1);
  std::string msg = test::error_of(SMD_ERR_BOOTSTRAP,
                                   [&] { TcpStoreServer second("", first.port(), kToken, 1); });
  EXPECT_EQ(msg, "cannot serve the store on port " + std::to_string(first.port()) +
                     ": Address already in use (another job? set SMD_MASTER_PORT)");
  EXPECT_SMD_ERROR(SMD_ERR_INVALID_ARGUMENT, "world size 0", TcpStoreServer("", 0, kToken, 0));
}

TEST(TcpStore, ClientRetriesUntilTheServerStarts) {
  int port = test::free_port();
  std::unique_ptr<TcpStoreClient> client;
  std::string error;
  std::thread t([&] {
    try {
      client = join(port, 0, 1, kToken);
    } catch (const std::exception &e) {
      error = e.what();
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  TcpStoreServer server("127.0.0.1", port, kToken, 1);
  t.join();
  ASSERT_EQ(error, "");
  client->set("k", bytes("v"));
  EXPECT_EQ(text(client->get("k", Deadline::after_ms(kWaitMs))), "v");
}

TEST(TcpStore, ConnectGivesUpAtTheDeadline) {
  int port = test::free_port();
  int64_t t0 = now_ms();
  std::string msg = test::error_of(SMD_ERR_BOOTSTRAP, [&] { join(port, 0, 1, kToken, 300); });
  EXPECT_NE(msg.find("could not reach the store at 127.0.0.1:" + std::to_string(port)),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("Connection refused"), std::string::npos) << msg;
  EXPECT_LT(now_ms() - t0, 20000);  // the 300 ms deadline, not kWaitMs
}

TEST(TcpStore, LostServerIsABootstrapError) {
  auto server = std::make_unique<TcpStoreServer>("", 0, kToken, 2);
  auto a = join(server->port(), 0, 2);
  auto b = join(server->port(), 1, 2);
  std::string waiting_error;
  std::thread waiter([&] {
    waiting_error =
        test::error_of(SMD_ERR_BOOTSTRAP, [&] { b->get("never", Deadline::after_ms(kWaitMs)); });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  int64_t t0 = now_ms();
  server.reset();
  waiter.join();
  EXPECT_LT(now_ms() - t0, 30000);  // the loss, not the get's deadline
  EXPECT_NE(waiting_error.find("lost the store at 127.0.0.1:"), std::string::npos) << waiting_error;
  EXPECT_NE(waiting_error.find("(rank 0 died?)"), std::string::npos) << waiting_error;
  EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "lost the store", a->set("k", bytes("v")));
  EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "lost the store", a->add("k", 1));
  a->goodbye();  // nobody left to tell: not an error
}

TEST(TcpStore, GoodbyeEndsTheClient) {
  TcpStoreServer server("", 0, kToken, 1);
  auto c = join(server.port(), 0, 1);
  c->goodbye();
  c->goodbye();
  EXPECT_SMD_ERROR(SMD_ERR_INVALID_USAGE, "after this rank said goodbye", c->set("k", bytes("v")));
  EXPECT_TRUE(server.failed_ranks().empty());
}

TEST(TcpStore, WaitForClientsToLeave) {
  TcpStoreServer server("", 0, kToken, 3);
  auto a = join(server.port(), 0, 3);
  auto b = join(server.port(), 1, 3);
  auto c = join(server.port(), 2, 3);
  a->goodbye();
  b->goodbye();
  int64_t t0 = now_ms();
  EXPECT_FALSE(server.wait_for_clients_to_leave(Deadline::after_ms(200)));
  EXPECT_GE(now_ms() - t0, 150);
  EXPECT_EQ(server.connected_ranks(), std::vector<int>{2});
  std::thread leaver([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    c.reset();  // leaves without goodbye: gone all the same, but failed
  });
  EXPECT_TRUE(server.wait_for_clients_to_leave(Deadline::after_ms(kWaitMs)));
  leaver.join();
  EXPECT_EQ(server.failed_ranks(), std::vector<int>{2});
}

// A rank in a child process: joins, says it is ready, then either says
// goodbye and exits or waits to be killed. Forked before the server's
// thread exists, so the child is a copy of a single-threaded process.
pid_t spawn_rank(int rank, int world, bool say_goodbye, int *port_pipe) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid != 0) {
    close(fds[0]);
    *port_pipe = fds[1];
    return pid;
  }
  close(fds[1]);
  int port = 0;
  if (read(fds[0], &port, sizeof port) != sizeof port) _exit(3);
  try {
    TcpStoreClient c("127.0.0.1", port, kToken, rank, world, Deadline::after_ms(kWaitMs), kWaitMs);
    c.set("ready/" + std::to_string(rank), bytes("1"));
    if (say_goodbye) {
      c.goodbye();
      _exit(0);
    }
    for (;;) pause();
  } catch (...) {
    _exit(2);
  }
}

bool wait_until_failed(TcpStoreClient &c, std::vector<int> expect) {
  Deadline d = Deadline::after_ms(kWaitMs);
  while (!d.expired()) {
    if (c.failed_ranks() == expect) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(TcpStore, FailedRanksAfterSigkillButNotAfterGoodbye) {
  int pipe_killed = -1, pipe_polite = -1;
  pid_t killed = spawn_rank(1, 3, false, &pipe_killed);
  pid_t polite = spawn_rank(2, 3, true, &pipe_polite);
  ASSERT_GT(killed, 0);
  ASSERT_GT(polite, 0);
  TcpStoreServer server("", 0, kToken, 3);
  int port = server.port();
  ASSERT_EQ(write(pipe_killed, &port, sizeof port), (ssize_t)sizeof port);
  ASSERT_EQ(write(pipe_polite, &port, sizeof port), (ssize_t)sizeof port);
  close(pipe_killed);
  close(pipe_polite);

  auto root = join(port, 0, 3);
  root->get("ready/1", Deadline::after_ms(kWaitMs));
  root->get("ready/2", Deadline::after_ms(kWaitMs));
  int status = 0;
  ASSERT_EQ(waitpid(polite, &status, 0), polite);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_TRUE(root->failed_ranks().empty());

  kill(killed, SIGKILL);
  ASSERT_EQ(waitpid(killed, &status, 0), killed);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_TRUE(wait_until_failed(*root, {1}));
  EXPECT_EQ(server.failed_ranks(), std::vector<int>{1});

  // A rank that comes back is no longer counted as failed.
  auto back = join(port, 1, 3);
  EXPECT_TRUE(root->failed_ranks().empty());
}

TEST(TcpStore, NoSocketsOrThreadsLeak) {
  int fds_before = count_entries("/proc/self/fd");
  int threads_before = count_entries("/proc/self/task");
  {
    TcpStoreServer server("", 0, kToken, 8);
    std::vector<std::unique_ptr<TcpStoreClient>> c;
    for (int r = 0; r < 8; ++r) c.push_back(join(server.port(), r, 8));
    for (int r = 0; r < 8; ++r) c[r]->add("n", 1);
    EXPECT_GT(count_entries("/proc/self/fd"), fds_before + 8);
    EXPECT_EQ(count_entries("/proc/self/task"), threads_before + 1);
    c[3]->goodbye();
    EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "refused", join(server.port(), 0, 8, "bad"));
  }
  EXPECT_EQ(count_entries("/proc/self/fd"), fds_before);
  EXPECT_EQ(count_entries("/proc/self/task"), threads_before);
}

}  // namespace
}  // namespace smd
