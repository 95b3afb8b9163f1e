// Matching: FIFO per tag, any order across tags, the unexpected-message
// path, thousands of outstanding requests, truncation and cancellation.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <vector>

#include "pattern.h"
#include "registry.h"

namespace tcheck {

namespace {

struct Message {
  int peer;
  uint64_t tag;
  uint64_t index;
  size_t size;
  std::vector<unsigned char> data;
  void *req = nullptr;
  bool done = false;
};

// Sizes that cross every protocol boundary a plugin may have: mostly
// small, some of a few pages, a few large.
size_t mixed_size(uint64_t i, size_t large) {
  if (i % 25 == 24) return large + i;
  if (i % 7 == 6) return 20000 + (i * 131) % 50000;
  return (i * 37) % 2000;
}

std::vector<int> peers_of(const Env &e) {
  std::vector<int> p;
  for (int r = 0; r < e.nranks; ++r)
    if (r != e.rank) p.push_back(r);
  return p;
}

void post_send(Env &e, Message &m) {
  m.data.resize(m.size);
  pattern_fill(m.data.data(), m.size, pattern_seed(e.rank, m.tag, m.index));
  m.req = e.isend(m.peer, m.data.data(), m.size, m.tag);
}

void post_recv(Env &e, Message &m) {
  m.data.assign(m.size, 0);
  m.req = e.irecv(m.peer, m.data.data(), m.size, m.tag);
}

void finish_recv(Env &e, Message &m, const Completion &c) {
  char what[160];
  snprintf(what, sizeof what, "message %llu (tag 0x%llx, %zu B) from rank %d",
           (unsigned long long)m.index, (unsigned long long)m.tag, m.size, m.peer);
  if (c.status != SMD_TRANSPORT_OK)
    e.fail("%s completed with %s", what, describe(c.status, c.error).c_str());
  if (c.size != m.size) e.fail("%s: received %zu B (out of order?)", what, c.size);
  e.check_pattern(m.data.data(), m.size, pattern_seed(m.peer, m.tag, m.index), what);
  m.done = true;
  std::vector<unsigned char>().swap(m.data);
}

[[noreturn]] void fail_pending(Env &e, const std::vector<Message> &recvs,
                               const std::vector<Message> &sends) {
  size_t r = 0, s = 0;
  const Message *first_r = nullptr, *first_s = nullptr;
  for (const Message &m : recvs)
    if (!m.done && r++ == 0) first_r = &m;
  for (const Message &m : sends)
    if (!m.done && s++ == 0) first_s = &m;
  const Message *m = first_r ? first_r : first_s;
  e.fail(
      "%zu of %zu receives and %zu of %zu sends still pending; the first: "
      "%s %llu (tag 0x%llx, %zu B) %s rank %d",
      r, recvs.size(), s, sends.size(), first_r ? "receive of message" : "send of message",
      (unsigned long long)m->index, (unsigned long long)m->tag, m->size, first_r ? "from" : "to",
      m->peer);
}

// Completes all of them, testing round-robin rather than one by one.
void complete_all(Env &e, std::vector<Message> &recvs, std::vector<Message> &sends) {
  size_t left = recvs.size() + sends.size();
  while (left > 0) {
    size_t before = left;
    for (Message &m : sends) {
      Completion c;
      if (m.done || !e.poll(m.req, &c, "send")) continue;
      if (c.status != SMD_TRANSPORT_OK)
        e.fail("send of %zu B to rank %d completed with %s", m.size, m.peer,
               describe(c.status, c.error).c_str());
      m.done = true;
      --left;
    }
    for (Message &m : recvs) {
      Completion c;
      if (m.done || !e.poll(m.req, &c, "receive")) continue;
      finish_recv(e, m, c);
      --left;
    }
    if (left == before) {
      if (now_seconds() > e.deadline() - 1) fail_pending(e, recvs, sends);
      e.idle();
    }
  }
}

}  // namespace

void test_tagged_ordering(Env &e) {
  const uint64_t kCount = 250;
  // Round 0 posts the receives first; round 1 sends first, so the
  // messages wait as unexpected ones.
  for (int round = 0; round < 2; ++round) {
    uint64_t tag = e.tag(uint64_t(round) + 1);
    std::vector<Message> recvs, sends;
    for (int p : peers_of(e))
      for (uint64_t i = 0; i < kCount; ++i) {
        recvs.push_back({p, tag, i, mixed_size(i, 100000), {}});
        sends.push_back({p, tag, i, mixed_size(i, 100000), {}});
      }
    if (round == 0)
      for (Message &m : recvs) post_recv(e, m);
    for (Message &m : sends) post_send(e, m);
    if (round == 1) {
      e.barrier();
      for (Message &m : recvs) post_recv(e, m);
    }
    complete_all(e, recvs, sends);
    e.barrier();
  }
}

void test_unordered_tags(Env &e) {
  const uint64_t kTags = 64;
  std::mt19937_64 rng(uint64_t(e.rank) * 7919 + 17);
  for (int round = 0; round < 2; ++round) {
    std::vector<Message> recvs, sends;
    for (int p : peers_of(e))
      for (uint64_t k = 0; k < kTags; ++k) {
        uint64_t tag = e.tag(uint64_t(round) * 1000 + k);
        size_t size = k % 8 == 7 ? 200000 + k : (k * 997) % 9000;
        sends.push_back({p, tag, k, size, {}});
        recvs.push_back({p, tag, k, size, {}});
      }
    if (round == 0) {
      // All sent before any receive; receives in reverse tag order.
      for (Message &m : sends) post_send(e, m);
      e.barrier();
      for (auto it = recvs.rbegin(); it != recvs.rend(); ++it) post_recv(e, *it);
    } else {
      // Shuffled: half the receives before the sends, half after.
      std::shuffle(recvs.begin(), recvs.end(), rng);
      size_t half = recvs.size() / 2;
      for (size_t i = 0; i < half; ++i) post_recv(e, recvs[i]);
      e.barrier();
      for (Message &m : sends) post_send(e, m);
      e.barrier();
      for (size_t i = half; i < recvs.size(); ++i) post_recv(e, recvs[i]);
    }
    complete_all(e, recvs, sends);
    e.barrier();
  }
}

void test_many_outstanding(Env &e) {
  const uint64_t kCount = 5000;
  std::vector<int> peers = peers_of(e);
  std::vector<Message> recvs, sends;
  // The same number to and from every peer, at least kCount in all.
  uint64_t per_peer = (kCount + peers.size() - 1) / peers.size();
  for (uint64_t i = 0; i < per_peer; ++i)
    for (int p : peers) {
      uint64_t tag = e.tag(i % 7);
      size_t size = i % 1000 == 999 ? 300000 : (i * 13) % 300;
      recvs.push_back({p, tag, i, size, {}});
      sends.push_back({p, tag, i, size, {}});
    }
  for (Message &m : recvs) post_recv(e, m);
  for (Message &m : sends) post_send(e, m);
  complete_all(e, recvs, sends);
}

namespace {

// Completes a receive that must be truncated and the send that fed it.
void expect_truncated(Env &e, void *recv, void *send, const char *what) {
  Completion c = e.wait(recv, what);
  if (c.status != SMD_TRANSPORT_ERR_TRUNCATED)
    e.fail("%s completed with %s, expected ERR_TRUNCATED", what,
           describe(c.status, c.error).c_str());
  c = e.wait(send, "the send of a truncated message");
  if (c.status != SMD_TRANSPORT_OK && c.status != SMD_TRANSPORT_ERR_TRUNCATED)
    e.fail("the send behind '%s' completed with %s", what, describe(c.status, c.error).c_str());
}

}  // namespace

void test_truncation(Env &e) {
  int to = e.next(), from = e.prev();
  std::vector<unsigned char> out(size_t(1) << 20), small(100), in(4096);
  // 4 KiB into 100 B, receive posted first.
  uint64_t tag = e.tag(1);
  pattern_fill(out.data(), 4096, pattern_seed(e.rank, tag, 0));
  void *r = e.irecv(from, small.data(), small.size(), tag);
  void *s = e.isend(to, out.data(), 4096, tag);
  expect_truncated(e, r, s, "a 4096-byte message into a 100-byte receive");

  // 1 MiB into 100 B, sent before the receive exists.
  uint64_t big = e.tag(2);
  pattern_fill(out.data(), out.size(), pattern_seed(e.rank, big, 0));
  s = e.isend(to, out.data(), out.size(), big);
  e.barrier();
  r = e.irecv(from, small.data(), small.size(), big);
  expect_truncated(e, r, s, "an unexpected 1 MiB message into a 100-byte receive");

  // The next message on the first tag arrives whole.
  pattern_fill(out.data(), 4096, pattern_seed(e.rank, tag, 1));
  r = e.irecv(from, in.data(), in.size(), tag);
  e.expect_ok(e.isend(to, out.data(), 4096, tag), "send after truncation");
  Completion c = e.expect_ok(r, "message after a truncated one");
  if (c.size != 4096) e.fail("message after a truncated one: %zu B", c.size);
  e.check_pattern(in.data(), 4096, pattern_seed(from, tag, 1), "message after a truncated one");
}

void test_cancel(Env &e) {
  int to = e.next(), from = e.prev();
  std::vector<unsigned char> buf(4096), out(size_t(1) << 20);
  uint64_t tag = e.tag(1);
  // A receive nobody matches, cancelled after some progress.
  void *r = e.irecv(from, buf.data(), buf.size(), tag);
  for (int i = 0; i < 100; ++i) e.t.progress(e.ctx);
  Completion c;
  if (e.poll(r, &c, "unmatched receive"))
    e.fail("a receive nobody sent to completed with %s", describe(c.status, c.error).c_str());
  e.cancel(r);

  // A large send nobody receives, cancelled.
  void *s = e.isend(to, out.data(), out.size(), e.tag(2));
  for (int i = 0; i < 100; ++i) e.t.progress(e.ctx);
  if (e.poll(s, &c, "unreceived 1 MiB send")) {
    if (c.status != SMD_TRANSPORT_OK)
      e.fail("an unreceived 1 MiB send completed with %s", describe(c.status, c.error).c_str());
    e.note("the plugin buffered an unreceived 1 MiB send");
  } else {
    e.cancel(s);
  }
  e.barrier();

  // The cancelled receive must not swallow the next message on its tag.
  pattern_fill(out.data(), 64, pattern_seed(e.rank, tag, 0));
  r = e.irecv(from, buf.data(), 64, tag);
  e.barrier();
  e.expect_ok(e.isend(to, out.data(), 64, tag), "send after cancel");
  c = e.expect_ok(r, "message on the tag of a cancelled receive");
  e.check_pattern(buf.data(), 64, pattern_seed(from, tag, 0),
                  "message on the tag of a cancelled receive");
  e.barrier();
}

}  // namespace tcheck
