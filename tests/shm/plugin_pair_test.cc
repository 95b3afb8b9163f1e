// Two contexts of the plugin in one process, talking through the table:
// fast, deterministic coverage of the protocols (eager, CMA rendezvous,
// ring-streamed rendezvous, queued sends, cancellation, iget) without
// forking. Both contexts are progressed from this one thread.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "smd_transport.h"

extern "C" const smd_transport_v1_t *smd_transport_plugin_v1(void);

namespace {

struct Host {
  smd_transport_host_t h{};
  std::string error;
  std::map<std::string, std::string> params;

  Host(int rank, int n) {
    h.struct_size = sizeof h;
    h.abi_version = SMD_TRANSPORT_ABI_VERSION;
    h.host = this;
    h.rank = rank;
    h.world_size = n;
    h.local_rank = rank;
    h.local_size = n;
    h.node_count = 1;
    h.timeout_ms = 60000;
    h.log = [](void *, int, const char *) {};
    h.set_error = [](void *self, const char *m) { static_cast<Host *>(self)->error = m ? m : ""; };
    h.get_param = [](void *self, const char *name) -> const char * {
      auto &p = static_cast<Host *>(self)->params;
      auto it = p.find(name);
      return it == p.end() ? nullptr : it->second.c_str();
    };
  }
};

std::vector<unsigned char> pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (unsigned char)(i * 131 + seed * 7 + (i >> 12));
  return v;
}

class PluginPair : public ::testing::TestWithParam<bool> {
 protected:
  const smd_transport_v1_t *t = smd_transport_plugin_v1();
  Host host[2] = {Host(0, 2), Host(1, 2)};
  void *ctx[2] = {nullptr, nullptr};
  void *ep[2] = {nullptr, nullptr};  // ep[i]: context i's endpoint to the other

  void SetUp() override {
    for (Host &h : host)
      if (!GetParam()) h.params["SMD_SHM_CMA"] = "0";
    std::vector<unsigned char> addr[2];
    for (int i = 0; i < 2; ++i) {
      ASSERT_EQ(t->init(&host[i].h, &ctx[i]), SMD_TRANSPORT_OK) << host[i].error;
      size_t n = 256;
      addr[i].resize(n);
      ASSERT_EQ(t->get_address(ctx[i], addr[i].data(), &n), SMD_TRANSPORT_OK);
      addr[i].resize(n);
    }
    for (int i = 0; i < 2; ++i)
      ASSERT_EQ(t->connect(ctx[i], 1 - i, addr[1 - i].data(), addr[1 - i].size(), &ep[i]),
                SMD_TRANSPORT_OK)
          << host[i].error;
  }

  void TearDown() override {
    for (void *c : ctx) {
      if (c != nullptr) {
        EXPECT_EQ(t->finalize(c), SMD_TRANSPORT_OK);
      }
    }
  }

  void *send(int from, const void *buf, size_t n, uint64_t tag) {
    void *req = nullptr;
    EXPECT_EQ(t->isend(ctx[from], ep[from], buf, n, nullptr, tag, &req), SMD_TRANSPORT_OK)
        << host[from].error;
    return req;
  }
  void *recv(int at, void *buf, size_t n, uint64_t tag) {
    void *req = nullptr;
    EXPECT_EQ(t->irecv(ctx[at], ep[at], buf, n, nullptr, tag, &req), SMD_TRANSPORT_OK)
        << host[at].error;
    return req;
  }
  // Drives both contexts until req (of context `owner`) finishes, for at
  // most a minute of wall-clock time (a count of polls would last a
  // different time on every machine).
  smd_transport_status_t finish(int owner, void *req, size_t *size = nullptr) {
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
      int done = 0;
      smd_transport_status_t s = t->test(ctx[owner], req, &done, size);
      if (done) return s;
      t->progress(ctx[1 - owner]);
      if (std::chrono::steady_clock::now() > limit) break;
    }
    ADD_FAILURE() << "request not finished after 60 s";
    return SMD_TRANSPORT_ERR_OTHER;
  }
  bool finished(int owner, void *req) {
    int done = 0;
    t->test(ctx[owner], req, &done, nullptr);
    return done != 0;
  }
};

TEST_P(PluginPair, EveryProtocolBothWays) {
  for (size_t n : {size_t(0), size_t(1), size_t(16351), size_t(16353), size_t(32704), size_t(32705),
                   size_t(1) << 20, (size_t(9) << 20) + 3}) {
    for (int from = 0; from < 2; ++from) {
      std::vector<unsigned char> out = pattern(n, unsigned(n + from)), in(n + 1, 0xee);
      void *r = recv(1 - from, in.data(), n, 5);
      void *s = send(from, out.data(), n, 5);
      size_t got = 99;
      ASSERT_EQ(finish(1 - from, r, &got), SMD_TRANSPORT_OK) << host[1 - from].error;
      ASSERT_EQ(finish(from, s), SMD_TRANSPORT_OK) << host[from].error;
      EXPECT_EQ(got, n);
      if (n) {
        EXPECT_EQ(memcmp(in.data(), out.data(), n), 0) << n << " bytes";
      }
      EXPECT_EQ(in[n], 0xee) << "wrote past the message";
    }
  }
}

TEST_P(PluginPair, UnexpectedMessagesWaitForTheirReceive) {
  std::vector<std::vector<unsigned char>> outs;
  std::vector<void *> sends;
  // Far more than the ring holds, mixed eager and rendezvous, two tags.
  for (unsigned i = 0; i < 300; ++i) {
    outs.push_back(pattern(i % 50 == 49 ? 200000 : 16000 + i, i));
    sends.push_back(send(0, outs.back().data(), outs.back().size(), i % 2));
  }
  for (int k = 0; k < 50; ++k) t->progress(ctx[1]);
  for (int tag : {1, 0})
    for (unsigned i = unsigned(tag); i < 300; i += 2) {
      std::vector<unsigned char> in(outs[i].size());
      void *r = recv(1, in.data(), in.size(), uint64_t(tag));
      ASSERT_EQ(finish(1, r), SMD_TRANSPORT_OK) << host[1].error;
      ASSERT_EQ(in, outs[i]) << "message " << i;
    }
  for (void *s : sends) ASSERT_EQ(finish(0, s), SMD_TRANSPORT_OK);
}

TEST_P(PluginPair, TruncationReportsAndConsumes) {
  for (size_t n : {size_t(4096), size_t(1) << 20}) {
    std::vector<unsigned char> out = pattern(n, 3), in(100);
    void *s = send(0, out.data(), n, 9);
    void *r = recv(1, in.data(), in.size(), 9);
    EXPECT_EQ(finish(1, r), SMD_TRANSPORT_ERR_TRUNCATED);
    EXPECT_NE(host[1].error.find("truncated"), std::string::npos) << host[1].error;
    EXPECT_EQ(memcmp(in.data(), out.data(), in.size()), 0);
    EXPECT_EQ(finish(0, s), SMD_TRANSPORT_OK);
  }
}

TEST_P(PluginPair, CancelledLargeSendIsWithdrawn) {
  std::vector<unsigned char> first = pattern(1 << 20, 1), second = pattern(1 << 20, 2);
  std::vector<unsigned char> in(1 << 20);
  void *s = send(0, first.data(), first.size(), 4);
  for (int k = 0; k < 10; ++k) t->progress(ctx[1]);  // descriptor now unexpected
  ASSERT_EQ(t->cancel(ctx[0], s), SMD_TRANSPORT_OK);
  for (int k = 0; k < 10; ++k) t->progress(ctx[1]);  // the retraction arrives
  s = send(0, second.data(), second.size(), 4);
  void *r = recv(1, in.data(), in.size(), 4);
  ASSERT_EQ(finish(1, r), SMD_TRANSPORT_OK) << host[1].error;
  EXPECT_EQ(in, second);
  EXPECT_EQ(finish(0, s), SMD_TRANSPORT_OK);
}

TEST_P(PluginPair, CancelledReceiveDoesNotSwallowTheNextMessage) {
  unsigned char a = 0, b = 0, out = 42;
  void *r = recv(1, &a, 1, 6);
  t->progress(ctx[1]);
  ASSERT_EQ(t->cancel(ctx[1], r), SMD_TRANSPORT_OK);
  void *s = send(0, &out, 1, 6);
  r = recv(1, &b, 1, 6);
  ASSERT_EQ(finish(1, r), SMD_TRANSPORT_OK);
  EXPECT_EQ(b, 42);
  EXPECT_EQ(a, 0);
  EXPECT_EQ(finish(0, s), SMD_TRANSPORT_OK);
}

TEST_P(PluginPair, IgetReadsThePeer) {
  std::vector<unsigned char> exposed = pattern(3 << 20, 8), local(3 << 20);
  void *mr = nullptr;
  ASSERT_EQ(t->mem_register(ctx[1], exposed.data(), exposed.size(), 0, &mr), SMD_TRANSPORT_OK);
  unsigned char key[128];
  size_t key_size = sizeof key;
  ASSERT_EQ(t->mem_pack(ctx[1], mr, key, &key_size), SMD_TRANSPORT_OK);
  void *req = nullptr;
  ASSERT_EQ(t->iget(ctx[0], ep[0], local.data(), nullptr,
                    reinterpret_cast<uintptr_t>(exposed.data()), key, key_size, local.size(), &req),
            SMD_TRANSPORT_OK)
      << host[0].error;
  EXPECT_EQ(req == nullptr, GetParam()) << "CMA reads complete at once";
  if (req != nullptr) {
    ASSERT_EQ(finish(0, req), SMD_TRANSPORT_OK) << host[0].error;
  }
  EXPECT_EQ(local, exposed);
  // Outside the registration: refused with a reason.
  EXPECT_EQ(
      t->iget(ctx[0], ep[0], local.data(), nullptr, reinterpret_cast<uintptr_t>(exposed.data()) + 1,
              key, key_size, local.size(), &req),
      SMD_TRANSPORT_ERR_INVALID);
  EXPECT_NE(host[0].error.find("outside the registration"), std::string::npos);
  EXPECT_EQ(t->mem_deregister(ctx[1], mr), SMD_TRANSPORT_OK);
}

TEST_P(PluginPair, SelfEndpoint) {
  // A context may connect to its own rank: rings to itself, memcpy for
  // large messages.
  void *self = nullptr;
  unsigned char addr[256];
  size_t n = sizeof addr;
  ASSERT_EQ(t->get_address(ctx[0], addr, &n), SMD_TRANSPORT_OK);
  ASSERT_EQ(t->connect(ctx[0], 0, addr, n, &self), SMD_TRANSPORT_OK) << host[0].error;
  for (size_t size : {size_t(10), size_t(5) << 20}) {
    std::vector<unsigned char> out = pattern(size, 4), in(size);
    void *s = nullptr, *r = nullptr;
    ASSERT_EQ(t->isend(ctx[0], self, out.data(), size, nullptr, 1, &s), SMD_TRANSPORT_OK);
    ASSERT_EQ(t->irecv(ctx[0], self, in.data(), size, nullptr, 1, &r), SMD_TRANSPORT_OK);
    EXPECT_EQ(finish(0, r), SMD_TRANSPORT_OK);
    EXPECT_EQ(finish(0, s), SMD_TRANSPORT_OK);
    EXPECT_EQ(in, out);
  }
  EXPECT_EQ(t->disconnect(ctx[0], self), SMD_TRANSPORT_OK);
}

TEST_P(PluginPair, BadAddressesAreRefusedWithReasons) {
  void *e = nullptr;
  unsigned char junk[80] = {1, 2, 3};
  EXPECT_EQ(t->connect(ctx[0], 1, junk, sizeof junk, &e), SMD_TRANSPORT_ERR_INVALID);
  EXPECT_NE(host[0].error.find("not an shm address"), std::string::npos) << host[0].error;
  unsigned char addr[256];
  size_t n = sizeof addr;
  ASSERT_EQ(t->get_address(ctx[1], addr, &n), SMD_TRANSPORT_OK);
  EXPECT_EQ(t->connect(ctx[0], 1, addr, n, &e), SMD_TRANSPORT_ERR_INVALID);
  EXPECT_NE(host[0].error.find("already connected"), std::string::npos) << host[0].error;
  size_t small = 4;
  EXPECT_EQ(t->get_address(ctx[1], addr, &small), SMD_TRANSPORT_ERR_INVALID);
  EXPECT_EQ(small, n);
}

TEST_P(PluginPair, DisconnectCompletesPendingRequests) {
  unsigned char b = 0;
  void *r = recv(1, &b, 1, 77);
  ASSERT_EQ(t->disconnect(ctx[1], ep[1]), SMD_TRANSPORT_OK);
  ep[1] = nullptr;
  int done = 0;
  EXPECT_EQ(t->test(ctx[1], r, &done, nullptr), SMD_TRANSPORT_ERR_CANCELED);
  EXPECT_EQ(done, 1);
}

INSTANTIATE_TEST_SUITE_P(Cma, PluginPair, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &i) {
                           return i.param ? std::string("cma") : std::string("ring");
                         });

}  // namespace
