// Contexts of the tcp plugin in one process, talking through the table
// over loopback: deterministic coverage of what the conformance driver
// cannot force from outside (a send cancelled mid-stream, an RTS taken
// back, a receive cancelled after it agreed to a rendezvous, disconnect,
// untrusted address blobs and strangers on the listening port, a peer
// that speaks garbage). All contexts are progressed from this one thread.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "smd_transport.h"

extern "C" const smd_transport_v1_t *smd_transport_plugin_v1(void);

namespace {

using Status = smd_transport_status_t;

struct Host {
  smd_transport_host_t h{};
  std::string error;
  std::vector<std::string> logs;
  std::map<std::string, std::string> params;

  Host(int rank, int n, int nodes) {
    h.struct_size = sizeof h;
    h.abi_version = SMD_TRANSPORT_ABI_VERSION;
    h.host = this;
    h.rank = rank;
    h.world_size = n;
    h.local_rank = 0;
    h.local_size = 1;
    h.node_index = rank % nodes;
    h.node_count = nodes;
    h.timeout_ms = 60000;
    h.log = [](void *self, int, const char *m) { static_cast<Host *>(self)->logs.push_back(m); };
    h.set_error = [](void *self, const char *m) { static_cast<Host *>(self)->error = m ? m : ""; };
    h.get_param = [](void *self, const char *name) -> const char * {
      auto &p = static_cast<Host *>(self)->params;
      auto it = p.find(name);
      return it == p.end() ? nullptr : it->second.c_str();
    };
  }
  bool logged(const std::string &text) const {
    for (const std::string &l : logs)
      if (l.find(text) != std::string::npos) return true;
    return false;
  }
};

std::vector<unsigned char> pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (unsigned char)(i * 131 + seed * 7 + (i >> 12));
  return v;
}

// memcmp of n bytes; an empty vector's data() may be null, which memcmp
// must not see even for n = 0.
bool same_bytes(const void *a, const void *b, size_t n) { return n == 0 || memcmp(a, b, n) == 0; }

std::vector<unsigned char> address_of(const smd_transport_v1_t *t, void *ctx) {
  std::vector<unsigned char> a(64);
  size_t n = a.size();
  EXPECT_EQ(t->get_address(ctx, a.data(), &n), SMD_TRANSPORT_OK);
  a.resize(n);
  return a;
}

// A world of `n` contexts (all of them ranks of this process), each
// connected to every other.
class TcpWorld : public ::testing::Test {
 protected:
  const smd_transport_v1_t *t = smd_transport_plugin_v1();
  std::deque<Host> host;  // stable addresses: each Host is its own callbacks' context
  std::vector<void *> ctx;
  std::vector<std::vector<void *>> ep;  // ep[i][j]: i's endpoint to j
  std::vector<std::vector<unsigned char>> addr;

  void start(int n, int nodes = 1) {
    host.clear();
    for (int i = 0; i < n; ++i) host.emplace_back(i, n, nodes);
    ctx.assign(size_t(n), nullptr);
    ep.assign(size_t(n), std::vector<void *>(size_t(n), nullptr));
    addr.assign(size_t(n), {});
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(t->init(&host[size_t(i)].h, &ctx[size_t(i)]), SMD_TRANSPORT_OK)
          << host[size_t(i)].error;
      addr[size_t(i)] = address_of(t, ctx[size_t(i)]);
    }
  }
  void connect(int i, int j) {
    ASSERT_EQ(t->connect(ctx[size_t(i)], j, addr[size_t(j)].data(), addr[size_t(j)].size(),
                         &ep[size_t(i)][size_t(j)]),
              SMD_TRANSPORT_OK)
        << host[size_t(i)].error;
  }
  void connect_all() {
    for (size_t i = 0; i < ctx.size(); ++i)
      for (size_t j = 0; j < ctx.size(); ++j)
        if (i != j) connect(int(i), int(j));
  }
  void TearDown() override {
    for (void *c : ctx) {
      if (c != nullptr) {
        EXPECT_EQ(t->finalize(c), SMD_TRANSPORT_OK);
      }
    }
  }

  void *send(int from, int to, const void *buf, size_t n, uint64_t tag) {
    void *req = nullptr;
    EXPECT_EQ(t->isend(ctx[size_t(from)], ep[size_t(from)][size_t(to)], buf, n, nullptr, tag, &req),
              SMD_TRANSPORT_OK)
        << host[size_t(from)].error;
    return req;
  }
  void *recv(int at, int from, void *buf, size_t n, uint64_t tag) {
    void *req = nullptr;
    EXPECT_EQ(t->irecv(ctx[size_t(at)], ep[size_t(at)][size_t(from)], buf, n, nullptr, tag, &req),
              SMD_TRANSPORT_OK)
        << host[size_t(at)].error;
    return req;
  }
  void progress_all(int rounds = 1) {
    for (int k = 0; k < rounds; ++k)
      for (void *c : ctx)
        if (c != nullptr) t->progress(c);
  }
  // Drives every context until req (of context `owner`) finishes, or fails
  // the test after kDeadline of wall-clock time: a count of polls would
  // stand for a different time on every machine, and some outcomes are
  // timed by the plugin itself (a peer's connection gets
  // TCP_LATE_CONNECT_MS to arrive).
  static constexpr std::chrono::seconds kDeadline{60};
  Status finish(int owner, void *req, size_t *size = nullptr) {
    Status s = SMD_TRANSPORT_ERR_OTHER;
    bool finished = progress_until([&] {
      int done = 0;
      s = t->test(ctx[size_t(owner)], req, &done, size);
      return done != 0;
    });
    if (!finished) {
      ADD_FAILURE() << "request never finished (" << kDeadline.count() << " s)";
      return SMD_TRANSPORT_ERR_OTHER;
    }
    return s;
  }
  // Progresses every context until cond() holds (true) or kDeadline
  // passes (false).
  bool progress_until(const std::function<bool()> &cond) {
    auto end = std::chrono::steady_clock::now() + kDeadline;
    while (!cond()) {
      if (std::chrono::steady_clock::now() > end) return false;
      progress_all();
    }
    return true;
  }
  // One test() call; true if the request finished (it is then released).
  bool poll_once(int owner, void *req, Status *s) {
    int done = 0;
    *s = t->test(ctx[size_t(owner)], req, &done, nullptr);
    return done != 0;
  }
};

TEST_F(TcpWorld, EagerAndRendezvousPostedAndUnexpectedBothWays) {
  start(2);
  connect_all();
  for (size_t n : {size_t(0), size_t(1), size_t(65536), size_t(65537), (size_t(1) << 20) + 5,
                   size_t(3) << 20}) {
    for (int from = 0; from < 2; ++from) {
      for (bool posted_first : {true, false}) {
        SCOPED_TRACE(std::to_string(n) + " bytes from " + std::to_string(from) +
                     (posted_first ? ", receive posted first" : ", unexpected"));
        std::vector<unsigned char> out = pattern(n, unsigned(n + from)), in(n + 1, 0xee);
        void *r = posted_first ? recv(1 - from, from, in.data(), n, 5) : nullptr;
        void *s = send(from, 1 - from, out.data(), n, 5);
        if (!posted_first) {
          progress_all(20);
          r = recv(1 - from, from, in.data(), n, 5);
        }
        size_t got = 99;
        EXPECT_EQ(finish(1 - from, r, &got), SMD_TRANSPORT_OK) << host[size_t(1 - from)].error;
        EXPECT_EQ(finish(from, s), SMD_TRANSPORT_OK) << host[size_t(from)].error;
        EXPECT_EQ(got, n);
        EXPECT_TRUE(same_bytes(in.data(), out.data(), n));
        EXPECT_EQ(in[n], 0xee) << "wrote past the message";
      }
    }
  }
}

TEST_F(TcpWorld, SameTagInOrderAcrossProtocols) {
  start(2);
  connect_all();
  // Large, small, large, small on one tag: the order survives the
  // rendezvous of the large ones.
  std::vector<size_t> sizes = {200000, 10, 150000, 0, 70000, 3};
  std::vector<std::vector<unsigned char>> out, in;
  std::vector<void *> sends, recvs;
  for (size_t i = 0; i < sizes.size(); ++i) {
    out.push_back(pattern(sizes[i], unsigned(i)));
    sends.push_back(send(0, 1, out.back().data(), sizes[i], 9));
  }
  progress_all(50);
  for (size_t i = 0; i < sizes.size(); ++i) in.emplace_back(sizes[i] + 8, 0);
  for (size_t i = 0; i < sizes.size(); ++i)
    recvs.push_back(recv(1, 0, in[i].data(), in[i].size(), 9));
  for (size_t i = 0; i < sizes.size(); ++i) {
    size_t got = 0;
    EXPECT_EQ(finish(1, recvs[i], &got), SMD_TRANSPORT_OK) << host[1].error;
    EXPECT_EQ(got, sizes[i]) << "message " << i;
    EXPECT_TRUE(same_bytes(in[i].data(), out[i].data(), sizes[i])) << "message " << i;
  }
  for (void *s : sends) EXPECT_EQ(finish(0, s), SMD_TRANSPORT_OK);
}

TEST_F(TcpWorld, TruncationKeepsTheFirstBytesAndTheSenderSucceeds) {
  start(2);
  connect_all();
  for (size_t n : {size_t(5000), size_t(5) << 20}) {
    for (bool posted_first : {true, false}) {
      std::vector<unsigned char> out = pattern(n, 3), in(100, 0);
      void *r = posted_first ? recv(1, 0, in.data(), in.size(), 4) : nullptr;
      void *s = send(0, 1, out.data(), n, 4);
      if (!posted_first) {
        progress_all(20);
        r = recv(1, 0, in.data(), in.size(), 4);
      }
      size_t got = 0;
      EXPECT_EQ(finish(1, r, &got), SMD_TRANSPORT_ERR_TRUNCATED);
      EXPECT_NE(host[1].error.find("truncated to the 100-byte receive"), std::string::npos)
          << host[1].error;
      EXPECT_EQ(got, 100u);
      EXPECT_EQ(0, memcmp(in.data(), out.data(), 100));
      EXPECT_EQ(finish(0, s), SMD_TRANSPORT_OK) << host[0].error;
    }
  }
  // The stream is intact afterwards.
  std::vector<unsigned char> out = pattern(300, 1), in(300, 0);
  void *r = recv(1, 0, in.data(), 300, 4);
  EXPECT_EQ(finish(0, send(0, 1, out.data(), 300, 4)), SMD_TRANSPORT_OK);
  EXPECT_EQ(finish(1, r), SMD_TRANSPORT_OK);
  EXPECT_EQ(in, out);
}

TEST_F(TcpWorld, CancelledUnexpectedRtsIsRetracted) {
  start(2);
  connect_all();
  std::vector<unsigned char> big = pattern(size_t(2) << 20, 1), small = pattern(64, 2);
  void *s = send(0, 1, big.data(), big.size(), 7);
  progress_all(20);  // the RTS waits at rank 1 as unexpected
  ASSERT_EQ(t->cancel(ctx[0], s), SMD_TRANSPORT_OK);
  void *s2 = send(0, 1, small.data(), small.size(), 7);
  progress_all(20);  // RETRACT and the small message arrive
  std::vector<unsigned char> in(big.size(), 0);
  void *r = recv(1, 0, in.data(), in.size(), 7);
  size_t got = 0;
  EXPECT_EQ(finish(1, r, &got), SMD_TRANSPORT_OK) << host[1].error;
  EXPECT_EQ(got, small.size()) << "the cancelled message was delivered";
  EXPECT_EQ(0, memcmp(in.data(), small.data(), small.size()));
  EXPECT_EQ(finish(0, s2), SMD_TRANSPORT_OK);
}

TEST_F(TcpWorld, SendCancelledMidStreamAbortsTheReceive) {
  start(2);
  connect_all();
  size_t n = size_t(64) << 20;
  std::vector<unsigned char> out(n, 0x5a), in(n, 0);
  void *r = recv(1, 0, in.data(), n, 3);
  void *s = send(0, 1, out.data(), n, 3);
  // RTS out, CTS back, a few MiB of DATA: far from 64 MiB.
  progress_all(3);
  Status st;
  ASSERT_FALSE(poll_once(0, s, &st)) << "64 MiB went in 3 rounds";
  ASSERT_EQ(t->cancel(ctx[0], s), SMD_TRANSPORT_OK);
  memset(out.data(), 0, n);  // the plugin must not read it any more
  EXPECT_EQ(finish(1, r), SMD_TRANSPORT_ERR_CANCELED);
  EXPECT_NE(host[1].error.find("sender cancelled"), std::string::npos) << host[1].error;
  // The next message on the tag is whole.
  std::vector<unsigned char> small = pattern(1000, 4), in2(1000, 0);
  r = recv(1, 0, in2.data(), in2.size(), 3);
  EXPECT_EQ(finish(0, send(0, 1, small.data(), small.size(), 3)), SMD_TRANSPORT_OK);
  EXPECT_EQ(finish(1, r), SMD_TRANSPORT_OK);
  EXPECT_EQ(in2, small);
}

TEST_F(TcpWorld, ReceiveCancelledAfterMatchingDropsTheData) {
  start(2);
  connect_all();
  size_t n = size_t(8) << 20;
  std::vector<unsigned char> out = pattern(n, 5), in(n, 0);
  void *s = send(0, 1, out.data(), n, 11);
  progress_all(10);                        // the RTS is unexpected at rank 1
  void *r = recv(1, 0, in.data(), n, 11);  // matches it: CTS queued
  ASSERT_EQ(t->cancel(ctx[1], r), SMD_TRANSPORT_OK);
  EXPECT_EQ(finish(0, s), SMD_TRANSPORT_OK) << host[0].error;
  for (unsigned char c : in)
    if (c != 0) {
      ADD_FAILURE() << "a cancelled receive's buffer was written";
      break;
    }
  // A receive cancelled while its data streams in: the rest is dropped.
  s = send(0, 1, out.data(), n, 12);
  r = recv(1, 0, in.data(), n, 12);
  progress_all(4);
  Status st;
  if (!poll_once(1, r, &st)) {
    ASSERT_EQ(t->cancel(ctx[1], r), SMD_TRANSPORT_OK);
  }
  EXPECT_EQ(finish(0, s), SMD_TRANSPORT_OK) << host[0].error;
  std::vector<unsigned char> small = pattern(77, 6), in2(77, 0);
  r = recv(1, 0, in2.data(), in2.size(), 12);
  EXPECT_EQ(finish(0, send(0, 1, small.data(), small.size(), 12)), SMD_TRANSPORT_OK);
  EXPECT_EQ(finish(1, r), SMD_TRANSPORT_OK);
  EXPECT_EQ(in2, small);
}

TEST_F(TcpWorld, DisconnectCancelsPendingRequests) {
  start(2);
  connect_all();
  std::vector<unsigned char> buf(1 << 20);
  void *r = recv(0, 1, buf.data(), 16, 1);
  void *s = send(0, 1, buf.data(), buf.size(), 2);  // an RTS nobody answers
  ASSERT_EQ(t->disconnect(ctx[0], ep[0][1]), SMD_TRANSPORT_OK);
  EXPECT_EQ(finish(0, r), SMD_TRANSPORT_ERR_CANCELED);
  EXPECT_NE(host[0].error.find("disconnected"), std::string::npos) << host[0].error;
  EXPECT_EQ(finish(0, s), SMD_TRANSPORT_ERR_CANCELED);
  void *req = nullptr;
  EXPECT_EQ(t->isend(ctx[0], ep[0][1], buf.data(), 1, nullptr, 1, &req), SMD_TRANSPORT_ERR_INVALID)
      << "a disconnected endpoint is no longer valid";
  // Rank 1 sees rank 0 leave: a receive posted for a peer that connected
  // and left ends with ERR_PEER. Rank 0 may have closed its connection
  // before its HELLO went out, so rank 1 can see only its own connection
  // break; the peer then counts as dead once its connection to us has had
  // TCP_LATE_CONNECT_MS (2 s) to arrive. Either way within seconds.
  auto start_wait = std::chrono::steady_clock::now();
  void *r1 = recv(1, 0, buf.data(), 16, 1);
  EXPECT_EQ(finish(1, r1), SMD_TRANSPORT_ERR_PEER) << host[1].error;
  EXPECT_NE(host[1].error.find("rank 0"), std::string::npos) << host[1].error;
  EXPECT_LT(std::chrono::steady_clock::now() - start_wait, std::chrono::seconds(20));
}

TEST_F(TcpWorld, PeerThatEndsFailsItsRequests) {
  start(3);
  connect_all();
  std::vector<unsigned char> buf(1 << 20), small = pattern(32, 9), got(32, 0);
  // Rank 2's last message arrives before it goes: still deliverable.
  void *last = send(2, 0, small.data(), small.size(), 8);
  EXPECT_EQ(finish(2, last), SMD_TRANSPORT_OK);
  void *r = recv(0, 2, buf.data(), 16, 1);
  void *s = send(0, 2, buf.data(), buf.size(), 2);
  progress_all(5);
  ASSERT_EQ(t->finalize(ctx[2]), SMD_TRANSPORT_OK);
  ctx[2] = nullptr;
  EXPECT_EQ(finish(0, r), SMD_TRANSPORT_ERR_PEER);
  EXPECT_NE(host[0].error.find("rank 2"), std::string::npos) << host[0].error;
  EXPECT_EQ(finish(0, s), SMD_TRANSPORT_ERR_PEER);
  EXPECT_EQ(t->check_peer(ctx[0], ep[0][2]), SMD_TRANSPORT_ERR_PEER);
  EXPECT_EQ(t->check_peer(ctx[0], ep[0][1]), SMD_TRANSPORT_OK) << host[0].error;
  void *late = recv(0, 2, got.data(), got.size(), 8);
  EXPECT_EQ(finish(0, late), SMD_TRANSPORT_OK) << host[0].error;
  EXPECT_EQ(got, small);
  EXPECT_EQ(finish(0, send(0, 2, buf.data(), 8, 3)), SMD_TRANSPORT_ERR_PEER);
  // The survivors still talk.
  void *r01 = recv(1, 0, got.data(), got.size(), 4);
  EXPECT_EQ(finish(0, send(0, 1, small.data(), small.size(), 4)), SMD_TRANSPORT_OK);
  EXPECT_EQ(finish(1, r01), SMD_TRANSPORT_OK);
}

TEST_F(TcpWorld, AddressBlobsAreChecked) {
  start(2);
  size_t need = 0;
  unsigned char tiny[1];
  EXPECT_EQ(t->get_address(ctx[0], tiny, &need), SMD_TRANSPORT_ERR_INVALID);
  EXPECT_EQ(need, addr[0].size());
  void *e = nullptr;
  EXPECT_EQ(t->connect(ctx[0], 0, addr[0].data(), addr[0].size(), &e), SMD_TRANSPORT_ERR_INVALID);
  EXPECT_NE(host[0].error.find("this rank"), std::string::npos) << host[0].error;
  EXPECT_EQ(t->connect(ctx[0], 5, addr[1].data(), addr[1].size(), &e), SMD_TRANSPORT_ERR_INVALID);
  EXPECT_EQ(t->connect(ctx[0], 1, addr[1].data(), addr[1].size() - 1, &e),
            SMD_TRANSPORT_ERR_INVALID);
  std::vector<unsigned char> bad = addr[1];
  bad[0] ^= 0xff;
  EXPECT_EQ(t->connect(ctx[0], 1, bad.data(), bad.size(), &e), SMD_TRANSPORT_ERR_INVALID);
  EXPECT_NE(host[0].error.find("magic"), std::string::npos) << host[0].error;
  connect_all();
  EXPECT_EQ(t->connect(ctx[0], 1, addr[1].data(), addr[1].size(), &e), SMD_TRANSPORT_ERR_INVALID)
      << "connected twice";
}

// The address the blob advertises: bytes 8..11.
std::string advertised(const std::vector<unsigned char> &blob) {
  char text[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, blob.data() + 8, text, sizeof text);
  return text;
}

TEST_F(TcpWorld, AdvertisedAddress) {
  start(2, 1);
  EXPECT_EQ(advertised(addr[0]), "127.0.0.1") << "one node: loopback";
  for (void *&c : ctx) {
    t->finalize(c);
    c = nullptr;
  }
  Host chosen(0, 2, 2);
  chosen.params["SMD_TCP_ADDR"] = "127.0.0.1";
  void *c = nullptr;
  ASSERT_EQ(t->init(&chosen.h, &c), SMD_TRANSPORT_OK) << chosen.error;
  EXPECT_EQ(advertised(address_of(t, c)), "127.0.0.1");
  EXPECT_TRUE(chosen.logged("SMD_TCP_ADDR=127.0.0.1"));
  t->finalize(c);
  Host wrong(0, 2, 2);
  wrong.params["SMD_TCP_ADDR"] = "no.such.host.invalid";
  c = nullptr;
  EXPECT_EQ(t->init(&wrong.h, &c), SMD_TRANSPORT_ERR_INVALID);
  EXPECT_EQ(c, nullptr);
  EXPECT_NE(wrong.error.find("SMD_TCP_ADDR=no.such.host.invalid"), std::string::npos)
      << wrong.error;
}

// The local address of the listening socket on `port` among this
// process's descriptors ("" if none).
std::string listening_address(int port) {
  for (int fd = 0; fd < 4096; ++fd) {
    int listening = 0;
    socklen_t len = sizeof listening;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening) continue;
    sockaddr_in a{};
    len = sizeof a;
    if (getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len) != 0 || a.sin_family != AF_INET ||
        ntohs(a.sin_port) != port)
      continue;
    char text[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
    return text;
  }
  return "";
}

int advertised_port(const std::vector<unsigned char> &blob) { return (blob[6] << 8) | blob[7]; }

// The transport listens where it tells peers to dial, not on every
// interface, unless SMD_TCP_BIND=any.
TEST_F(TcpWorld, ListensOnlyOnTheAdvertisedAddress) {
  for (const char *bind : {"", "advertised", "any"}) {
    Host h(0, 2, 2);
    h.params["SMD_TCP_ADDR"] = "127.0.0.1";
    if (*bind) h.params["SMD_TCP_BIND"] = bind;
    void *c = nullptr;
    ASSERT_EQ(t->init(&h.h, &c), SMD_TRANSPORT_OK) << h.error;
    int port = advertised_port(address_of(t, c));
    EXPECT_EQ(listening_address(port), strcmp(bind, "any") == 0 ? "0.0.0.0" : "127.0.0.1")
        << "SMD_TCP_BIND=" << bind;
    t->finalize(c);
  }
  Host wrong(0, 2, 2);
  wrong.params["SMD_TCP_BIND"] = "everywhere";
  void *c = nullptr;
  EXPECT_EQ(t->init(&wrong.h, &c), SMD_TRANSPORT_ERR_INVALID);
  EXPECT_NE(wrong.error.find("SMD_TCP_BIND=everywhere"), std::string::npos) << wrong.error;
}

TEST_F(TcpWorld, InterfaceNamesAsAddresses) {
  // As NCCL_SOCKET_IFNAME takes them: a name, a prefix, =exact.
  for (const char *name : {"lo", "=lo", "l"}) {
    Host by_name(0, 2, 2);
    by_name.params["SMD_TCP_ADDR"] = name;
    void *c = nullptr;
    ASSERT_EQ(t->init(&by_name.h, &c), SMD_TRANSPORT_OK) << name << ": " << by_name.error;
    EXPECT_EQ(advertised(address_of(t, c)), "127.0.0.1") << name;
    EXPECT_TRUE(by_name.logged(std::string("SMD_TCP_ADDR=") + name + " (127.0.0.1)")) << name;
    t->finalize(c);
  }
  // An unknown name lists the interfaces there are.
  for (const char *name : {"nosuchif0", "=l"}) {
    Host unknown(0, 2, 2);
    unknown.params["SMD_TCP_ADDR"] = name;
    void *c = nullptr;
    EXPECT_EQ(t->init(&unknown.h, &c), SMD_TRANSPORT_ERR_INVALID) << name;
    EXPECT_NE(unknown.error.find(std::string("SMD_TCP_ADDR=") + name +
                                 " is not an IPv4 address, "
                                 "the name of an interface with one (this host has: "),
              std::string::npos)
        << unknown.error;
    EXPECT_NE(unknown.error.find("lo 127.0.0.1"), std::string::npos) << unknown.error;
  }
}

// A raw socket connected to a context's listening port.
int dial(const std::vector<unsigned char> &blob) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t((blob[6] << 8) | blob[7]));
  memcpy(&a.sin_addr.s_addr, blob.data() + 8, 4);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
  return fd;
}

void put64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = (unsigned char)(v >> (56 - 8 * i));
}
void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (unsigned char)(v >> (24 - 8 * i));
}

std::vector<unsigned char> frame(uint32_t kind, uint32_t flags, uint64_t tag, uint64_t size,
                                 uint64_t id) {
  std::vector<unsigned char> f(32);
  put32(f.data(), kind);
  put32(f.data() + 4, flags);
  put64(f.data() + 8, tag);
  put64(f.data() + 16, size);
  put64(f.data() + 24, id);
  return f;
}

TEST_F(TcpWorld, StrangersAreRefusedAndGarbageFailsOnlyThatPeer) {
  start(3);
  connect(0, 1);
  connect(1, 0);
  // Rank 2 is played by raw sockets.
  connect(0, 2);
  uint64_t nonce0 = 0;
  for (int i = 0; i < 8; ++i) nonce0 = (nonce0 << 8) | addr[0][size_t(16 + i)];
  // A HELLO for another listener is refused.
  int stranger = dial(addr[0]);
  std::vector<unsigned char> hello = frame(1, 1, nonce0 + 1, 2, 3);
  ASSERT_EQ(write(stranger, hello.data(), hello.size()), ssize_t(hello.size()));
  EXPECT_TRUE(progress_until([&] { return host[0].logged("greets another listener"); }))
      << "stranger not refused";
  close(stranger);
  // A proper HELLO as rank 2, then a frame of an unknown kind.
  int fake = dial(addr[0]);
  hello = frame(1, 1, nonce0, 2, 3);
  ASSERT_EQ(write(fake, hello.data(), hello.size()), ssize_t(hello.size()));
  std::vector<unsigned char> junk(64);
  void *r = recv(0, 2, junk.data(), junk.size(), 1);
  progress_all(20);
  std::vector<unsigned char> bad = frame(77, 0, 1, 0, 0);
  ASSERT_EQ(write(fake, bad.data(), bad.size()), ssize_t(bad.size()));
  EXPECT_EQ(finish(0, r), SMD_TRANSPORT_ERR_PEER);
  EXPECT_NE(host[0].error.find("protocol error"), std::string::npos) << host[0].error;
  close(fake);
  // Ranks 0 and 1 are unaffected.
  std::vector<unsigned char> out = pattern(100, 1), in(100, 0);
  void *r1 = recv(1, 0, in.data(), in.size(), 5);
  EXPECT_EQ(finish(0, send(0, 1, out.data(), out.size(), 5)), SMD_TRANSPORT_OK);
  EXPECT_EQ(finish(1, r1), SMD_TRANSPORT_OK);
  EXPECT_EQ(in, out);
}

uint64_t get64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}
uint32_t get32(const unsigned char *p) { return uint32_t(get64(p) >> 32); }

// Two large messages crossing at once, rank 1 played by raw sockets that
// read everything rank 0 writes: rank 1's RTS and its CTS for rank 0's
// message arrive together, so rank 0 has its own DATA and a CTS to write.
// The CTS must leave first: rank 1's whole message waits for it, and
// behind rank 0's DATA the two directions would take turns on the link
// instead of running together. Then both messages stream at once and
// arrive intact.
TEST_F(TcpWorld, CtsGoesAheadOfOurOwnDataWhenBothSend) {
  start(2);
  // Rank 0 dials a listener of ours in place of context 1's.
  int lfd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in la{};
  la.sin_family = AF_INET;
  la.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof la;
  ASSERT_EQ(bind(lfd, reinterpret_cast<sockaddr *>(&la), sizeof la), 0);
  ASSERT_EQ(listen(lfd, 1), 0);
  ASSERT_EQ(getsockname(lfd, reinterpret_cast<sockaddr *>(&la), &len), 0);
  std::vector<unsigned char> blob = addr[1];
  memcpy(blob.data() + 6, &la.sin_port, 2);  // both big-endian
  memcpy(blob.data() + 8, &la.sin_addr.s_addr, 4);
  ASSERT_EQ(t->connect(ctx[0], 1, blob.data(), blob.size(), &ep[0][1]), SMD_TRANSPORT_OK)
      << host[0].error;
  int from0 = accept(lfd, nullptr, nullptr);
  ASSERT_GE(from0, 0);
  close(lfd);
  uint64_t nonce0 = get64(addr[0].data() + 16);
  int to0 = dial(addr[0]);
  std::vector<unsigned char> hello = frame(1, 1, nonce0, 1, 2);
  ASSERT_EQ(write(to0, hello.data(), hello.size()), ssize_t(hello.size()));

  const size_t kSize = 4u << 20;
  std::vector<unsigned char> out = pattern(kSize, 1), in(kSize, 0), theirs = pattern(kSize, 2);
  void *s = send(0, 1, out.data(), kSize, 7);
  void *r = recv(0, 1, in.data(), kSize, 8);
  // Everything rank 0 writes to rank 1, read as it comes.
  std::vector<unsigned char> got;
  auto read_some = [&] {
    unsigned char buf[1 << 16];
    ssize_t n;
    while ((n = ::recv(from0, buf, sizeof buf, MSG_DONTWAIT)) > 0)
      got.insert(got.end(), buf, buf + n);
  };
  ASSERT_TRUE(progress_until([&] {
    read_some();
    return got.size() >= 64;
  }));
  ASSERT_EQ(get32(got.data()), 1u) << "HELLO first";
  ASSERT_EQ(get32(got.data() + 32), 3u) << "then the RTS";
  uint64_t rts_id = get64(got.data() + 32 + 24);
  EXPECT_EQ(got.size(), 64u) << "nothing but the RTS before a CTS";
  // Rank 1's RTS (tag 8) and its CTS for rank 0's message, in one write.
  std::vector<unsigned char> both = frame(3, 0, 8, kSize, 55);
  std::vector<unsigned char> cts = frame(4, 0, 0, kSize, rts_id);
  both.insert(both.end(), cts.begin(), cts.end());
  ASSERT_EQ(write(to0, both.data(), both.size()), ssize_t(both.size()));
  ASSERT_TRUE(progress_until([&] {
    read_some();
    return got.size() >= 96;
  }));
  EXPECT_EQ(get32(got.data() + 64), 4u) << "the next frame is our CTS, before any DATA";
  EXPECT_EQ(get64(got.data() + 64 + 16), kSize);
  EXPECT_EQ(get64(got.data() + 64 + 24), 55u);

  // Both directions at once: rank 1 streams its message while reading.
  std::vector<unsigned char> mine;
  for (size_t off = 0; off < kSize; off += 100000) {
    size_t n = std::min<size_t>(100000, kSize - off);
    std::vector<unsigned char> h = frame(5, off + n == kSize ? 1 : 0, 0, n, 0);
    mine.insert(mine.end(), h.begin(), h.end());
    mine.insert(mine.end(), theirs.begin() + long(off), theirs.begin() + long(off + n));
  }
  size_t written = 0, parsed = 96;
  std::vector<unsigned char> data;
  bool last = false;
  Status ss = SMD_TRANSPORT_ERR_OTHER, rs = SMD_TRANSPORT_ERR_OTHER;
  bool s_done = false, r_done = false;
  ASSERT_TRUE(progress_until([&] {
    if (written < mine.size()) {
      ssize_t n = ::send(to0, mine.data() + written, mine.size() - written, MSG_DONTWAIT);
      if (n > 0) written += size_t(n);
    }
    read_some();
    while (!last && got.size() - parsed >= 32) {
      size_t n = size_t(get64(got.data() + parsed + 16));
      if (got.size() - parsed < 32 + n) break;
      EXPECT_EQ(get32(got.data() + parsed), 5u) << "only DATA after the CTS";
      last = (get32(got.data() + parsed + 4) & 1u) != 0;
      data.insert(data.end(), got.begin() + long(parsed + 32), got.begin() + long(parsed + 32 + n));
      parsed += 32 + n;
    }
    if (!s_done) s_done = poll_once(0, s, &ss);
    if (!r_done) r_done = poll_once(0, r, &rs);
    return s_done && r_done && last;
  }));
  EXPECT_EQ(ss, SMD_TRANSPORT_OK);
  EXPECT_EQ(rs, SMD_TRANSPORT_OK);
  EXPECT_TRUE(data == out) << "rank 0's message arrived whole";
  EXPECT_TRUE(in == theirs) << "rank 1's message arrived whole";
  close(from0);
  close(to0);
}

TEST_F(TcpWorld, ThousandsOutstandingOverManyTags) {
  start(2);
  connect_all();
  const int kCount = 6000;
  std::vector<std::vector<unsigned char>> out(kCount), in(kCount);
  std::vector<void *> sends(kCount), recvs(kCount);
  for (int i = 0; i < kCount; ++i) {
    size_t n = i % 500 == 499 ? 100000 : size_t(i % 97);
    out[size_t(i)] = pattern(n, unsigned(i));
    in[size_t(i)].assign(n, 0);
  }
  // Half the receives before the sends, half after; tags i % 61.
  for (int i = 0; i < kCount / 2; ++i)
    recvs[size_t(i)] = recv(1, 0, in[size_t(i)].data(), in[size_t(i)].size(), uint64_t(i % 61));
  for (int i = 0; i < kCount; ++i)
    sends[size_t(i)] = send(0, 1, out[size_t(i)].data(), out[size_t(i)].size(), uint64_t(i % 61));
  progress_all(20);
  for (int i = kCount / 2; i < kCount; ++i)
    recvs[size_t(i)] = recv(1, 0, in[size_t(i)].data(), in[size_t(i)].size(), uint64_t(i % 61));
  for (int i = 0; i < kCount; ++i) {
    ASSERT_EQ(finish(1, recvs[size_t(i)]), SMD_TRANSPORT_OK) << "message " << i;
    ASSERT_EQ(in[size_t(i)], out[size_t(i)]) << "message " << i;
  }
  for (void *s : sends) ASSERT_EQ(finish(0, s), SMD_TRANSPORT_OK);
}

}  // namespace
