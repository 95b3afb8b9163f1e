// The store server facing peers that do not follow the protocol: garbage,
// oversized or cut frames, silence, requests before HELLO. Each must cost
// only its own connection while the store keeps serving everyone else.
#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>
#include <thread>

#include "core/bootstrap/tcp_store_client.h"
#include "core/bootstrap/tcp_store_server.h"
#include "expect_error.h"
#include "raw_socket.h"

namespace smd {
namespace {

using test::closed_by_peer;
using test::raw_connect;
using test::raw_reply;
using test::raw_send;

constexpr char kToken[] = "hostile-test";
// How long a wait that must succeed may take, however busy the machine.
constexpr int64_t kWaitMs = 60000;

Bytes bytes(const std::string &s) { return Bytes(s.begin(), s.end()); }

// The store still works for a well-behaved rank.
void expect_serving(TcpStoreServer &server, int rank, int world) {
  TcpStoreClient c("127.0.0.1", server.port(), kToken, rank, world, Deadline::after_ms(kWaitMs),
                   kWaitMs);
  std::string key = "alive/" + std::to_string(rank);
  c.set(key, bytes("yes"));
  EXPECT_EQ(c.get(key, Deadline::after_ms(kWaitMs)), bytes("yes"));
  c.goodbye();
}

class Hostile : public ::testing::Test {
 protected:
  Hostile() : server_("", 0, kToken, 4) {}
  int connect() {
    int fd = raw_connect(server_.port());
    EXPECT_GE(fd, 0);
    return fd;
  }
  TcpStoreServer server_;
};

TEST_F(Hostile, GarbageBytesCloseThatConnection) {
  int fd = connect();
  ASSERT_TRUE(raw_send(fd, bytes("GET / HTTP/1.1\r\nHost: store\r\n\r\n")));
  EXPECT_TRUE(closed_by_peer(fd));
  close(fd);
  expect_serving(server_, 0, 4);
}

TEST_F(Hostile, OversizedLengthPrefixIsRefusedBeforeReading) {
  int fd = connect();
  ASSERT_TRUE(raw_send(fd, Bytes{0xff, 0xff, 0xff, 0x7f, 1}));
  EXPECT_TRUE(closed_by_peer(fd));
  close(fd);
  // Before HELLO even a frame within the 64 MiB limit is too big.
  fd = connect();
  ASSERT_TRUE(raw_send(fd, Bytes{0x00, 0x00, 0x10, 0x00, 1}));
  EXPECT_TRUE(closed_by_peer(fd));
  close(fd);
  expect_serving(server_, 0, 4);
}

TEST_F(Hostile, ZeroLengthFrame) {
  int fd = connect();
  ASSERT_TRUE(raw_send(fd, Bytes{0, 0, 0, 0}));
  EXPECT_TRUE(closed_by_peer(fd));
  close(fd);
  expect_serving(server_, 1, 4);
}

TEST_F(Hostile, HalfAFrameThenClose) {
  Bytes hello = test::hello_frame(kToken, 2, 4);
  int fd = connect();
  ASSERT_TRUE(raw_send(fd, Bytes(hello.begin(), hello.begin() + hello.size() / 2)));
  close(fd);
  expect_serving(server_, 2, 4);  // rank 2 was never joined, so it is free
  EXPECT_TRUE(server_.failed_ranks().empty());
}

TEST_F(Hostile, SilentConnectionsBlockNobody) {
  std::vector<int> silent;
  for (int i = 0; i < 50; ++i) silent.push_back(connect());
  int64_t t0 = now_ms();
  expect_serving(server_, 0, 4);
  expect_serving(server_, 1, 4);
  EXPECT_LT(now_ms() - t0, 20000);  // not held up behind the silent ones
  for (int fd : silent) close(fd);
}

TEST_F(Hostile, HelloOneByteAtATime) {
  Bytes hello = test::hello_frame(kToken, 3, 4);
  int fd = connect();
  for (uint8_t b : hello) {
    ASSERT_TRUE(raw_send(fd, Bytes{b}));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  auto reply = raw_reply(fd);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->op, wire::Op::kOk);
  EXPECT_EQ(server_.connected_ranks(), std::vector<int>{3});
  close(fd);
}

TEST_F(Hostile, RequestBeforeHelloGetsAReason) {
  wire::Message set;
  set.op = wire::Op::kSet;
  set.key = "sneaky";
  int fd = connect();
  ASSERT_TRUE(raw_send(fd, wire::encode(set)));
  auto reply = raw_reply(fd);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->op, wire::Op::kError);
  EXPECT_EQ(reply->reason, "the first message must be HELLO, not SET");
  EXPECT_TRUE(closed_by_peer(fd));
  close(fd);
  TcpStoreClient c("127.0.0.1", server_.port(), kToken, 0, 4, Deadline::after_ms(kWaitMs), kWaitMs);
  EXPECT_EQ(*c.check({"sneaky"}), std::vector<bool>{false});
}

TEST_F(Hostile, WrongTokenByHand) {
  int fd = connect();
  ASSERT_TRUE(raw_send(fd, test::hello_frame("someone-else", 0, 4)));
  auto reply = raw_reply(fd);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->op, wire::Op::kError);
  EXPECT_EQ(reply->reason, "job token mismatch (another job owns this port?)");
  EXPECT_TRUE(closed_by_peer(fd));
  close(fd);
}

TEST_F(Hostile, JoinedRankSendingGarbageIsCutOffAndCountedFailed) {
  int fd = connect();
  ASSERT_TRUE(raw_send(fd, test::hello_frame(kToken, 1, 4)));
  ASSERT_EQ(raw_reply(fd)->op, wire::Op::kOk);
  ASSERT_TRUE(raw_send(fd, Bytes{1, 0, 0, 0, 99}));  // unknown opcode
  EXPECT_TRUE(closed_by_peer(fd));
  close(fd);
  EXPECT_EQ(server_.failed_ranks(), std::vector<int>{1});
  expect_serving(server_, 0, 4);
}

TEST_F(Hostile, JoinedRankSendingARepliesOpcodeIsCutOff) {
  int fd = connect();
  ASSERT_TRUE(raw_send(fd, test::hello_frame(kToken, 2, 4)));
  ASSERT_EQ(raw_reply(fd)->op, wire::Op::kOk);
  wire::Message ok;
  ok.op = wire::Op::kOk;
  ASSERT_TRUE(raw_send(fd, wire::encode(ok)));
  auto reply = raw_reply(fd);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->reason, "OK is a reply, not a request");
  EXPECT_TRUE(closed_by_peer(fd));
  close(fd);
}

TEST_F(Hostile, FloodWithoutReadingIsCutOff) {
  int fd = connect();
  ASSERT_TRUE(raw_send(fd, test::hello_frame(kToken, 3, 4)));
  ASSERT_EQ(raw_reply(fd)->op, wire::Op::kOk);
  // A GET that waits, then a pile of requests behind it.
  wire::Message get;
  get.op = wire::Op::kGet;
  get.key = "never";
  get.number = 60000;
  ASSERT_TRUE(raw_send(fd, wire::encode(get)));
  Bytes junk(256 << 10, 0);
  bool cut = false;
  for (int i = 0; i < 1000 && !cut; ++i) cut = !raw_send(fd, junk);
  EXPECT_TRUE(cut || closed_by_peer(fd));
  close(fd);
  expect_serving(server_, 0, 4);
}

}  // namespace
}  // namespace smd
