// A context's life: creation and connection, blocking waits, a peer that
// dies, and finalize leaving nothing behind.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "pattern.h"
#include "plugin_table.h"
#include "registry.h"
#include "system_info.h"

namespace tcheck {

void test_connect_all(Env &e) {
  e.last_error.clear();
  smd_transport_status_t s = e.t.init(&e.host, &e.ctx);
  if (s != SMD_TRANSPORT_OK) e.fail("init returned %s", describe(s, e.last_error).c_str());
  if (e.ctx == nullptr) e.fail("init returned OK but no context");

  // Size query: a buffer that is too small reports the size needed.
  unsigned char probe[1];
  size_t need = 0;
  e.last_error.clear();
  s = e.t.get_address(e.ctx, probe, &need);
  if (s != SMD_TRANSPORT_ERR_INVALID || need == 0)
    e.fail(
        "get_address into a 0-byte buffer returned %s and size %zu; "
        "expected ERR_INVALID and the size needed",
        describe(s, e.last_error).c_str(), need);
  if (need > kMaxAddress)
    e.fail("address of %zu B is larger than the %zu B this check allows", need, kMaxAddress);
  std::vector<unsigned char> addr(need);
  size_t size = need;
  e.check(e.t.get_address(e.ctx, addr.data(), &size), "get_address");
  if (size == 0 || size > need)
    e.fail("get_address wrote %zu B after asking for a %zu-byte buffer", size, need);
  memcpy(e.arena->address[e.rank], addr.data(), size);
  e.arena->address_len[e.rank] = uint32_t(size);
  e.note("address %zu B", size);
  e.barrier();

  e.ep.assign(size_t(e.nranks), nullptr);
  char what[64];
  for (int p = 0; p < e.nranks; ++p) {
    if (p == e.rank) continue;
    e.last_error.clear();
    s = e.t.connect(e.ctx, p, e.arena->address[p], e.arena->address_len[p], &e.ep[size_t(p)]);
    if (s != SMD_TRANSPORT_OK)
      e.fail("connect to rank %d returned %s", p, describe(s, e.last_error).c_str());
    if (e.ep[size_t(p)] == nullptr) e.fail("connect to rank %d gave no endpoint", p);
  }
  e.connected = true;

  // Hello from everyone to everyone.
  uint64_t tag = e.tag(1);
  std::vector<uint64_t> in(size_t(e.nranks)), out(1);
  pattern_fill(out.data(), 8, pattern_seed(e.rank, tag, 0));
  std::vector<void *> recvs(size_t(e.nranks)), sends(size_t(e.nranks));
  for (int p = 0; p < e.nranks; ++p)
    if (p != e.rank) recvs[size_t(p)] = e.irecv(p, &in[size_t(p)], 8, tag);
  for (int p = 0; p < e.nranks; ++p)
    if (p != e.rank) sends[size_t(p)] = e.isend(p, out.data(), 8, tag);
  for (int p = 0; p < e.nranks; ++p) {
    if (p == e.rank) continue;
    snprintf(what, sizeof what, "hello to rank %d", p);
    e.expect_ok(sends[size_t(p)], what);
    snprintf(what, sizeof what, "hello from rank %d", p);
    e.expect_ok(recvs[size_t(p)], what);
    e.check_pattern(&in[size_t(p)], 8, pattern_seed(p, tag, 0), what);
  }
}

void test_wait(Env &e) {
  if (e.t.wait == nullptr) e.skip("plugin has no wait entry");
  // Bounded with nothing to do.
  for (int64_t us : {int64_t(0), int64_t(20000)}) {
    double t0 = now_seconds();
    e.last_error.clear();
    smd_transport_status_t s = e.t.wait(e.ctx, us);
    double dt = now_seconds() - t0;
    if (s != SMD_TRANSPORT_OK && s != SMD_TRANSPORT_IN_PROGRESS)
      e.fail("wait(%lld us) returned %s", (long long)us, describe(s, e.last_error).c_str());
    if (dt > 2.0 + double(us) * 1e-6) e.fail("wait(%lld us) took %.2f s", (long long)us, dt);
  }
  // Woken by a message: the sender waits 200 ms, the receiver sits in
  // wait(8 s); it must return long before the 8 s are up. The margins are
  // wide so that a slow or busy machine (the sender's post may come late)
  // cannot pass for a wait() that sleeps its whole time.
  for (int sender : {0, 1}) {
    uint64_t tag = e.tag(uint64_t(sender) + 1);
    uint64_t word = 0;
    if (e.rank == sender) {
      e.barrier();
      usleep(200000);
      pattern_fill(&word, 8, pattern_seed(e.rank, tag, 0));
      std::vector<void *> sends;
      for (int p = 0; p < e.nranks; ++p)
        if (p != e.rank) sends.push_back(e.isend(p, &word, 8, tag));
      for (void *s : sends) e.expect_ok(s, "send to a waiting rank");
    } else {
      void *r = e.irecv(sender, &word, 8, tag);
      e.barrier();
      double t0 = now_seconds();
      Completion c;
      while (!e.poll(r, &c, "receive while in wait()")) {
        e.last_error.clear();
        smd_transport_status_t s = e.t.wait(e.ctx, 8000000);
        if (s != SMD_TRANSPORT_OK && s != SMD_TRANSPORT_IN_PROGRESS)
          e.fail("wait(8 s) returned %s", describe(s, e.last_error).c_str());
        if (now_seconds() - t0 > 20) e.fail("no message within 20 s of waiting");
      }
      double dt = now_seconds() - t0;
      if (c.status != SMD_TRANSPORT_OK)
        e.fail("receive while in wait() completed with %s", describe(c.status, c.error).c_str());
      if (dt > 4.0)
        e.fail(
            "a message sent after 0.2 s completed only after %.2f s: wait() "
            "does not wake up when a message arrives",
            dt);
      e.check_pattern(&word, 8, pattern_seed(sender, tag, 0), "message received in wait()");
      if (e.verbose) e.note("a message sent after 0.2 s woke wait() at %.3f s", dt);
    }
    e.barrier();
  }
}

void test_peer_death(Env &e) {
  const int victim = e.nranks - 1;
  const size_t big = size_t(1) << 20;
  std::vector<unsigned char> out(big), in(big), small(64);
  uint64_t never = e.tag(1), unreceived = e.tag(2), orphan = e.tag(3);
  void *recv_from_victim = nullptr, *send_to_victim = nullptr;
  if (e.rank == victim) {
    // Leave work in flight towards every survivor, then die.
    pattern_fill(out.data(), big, pattern_seed(e.rank, orphan, 0));
    for (int p = 0; p < victim; ++p) {
      e.forget(e.isend(p, out.data(), big, orphan));
      e.forget(e.irecv(p, small.data(), small.size(), never));
    }
    for (int i = 0; i < 100; ++i) e.t.progress(e.ctx);
    e.barrier();
    e.arena->departed[e.rank].store(1);
    e.arena->live.fetch_sub(1);
    Result &mine = e.arena->results[e.test_index()][e.rank];
    snprintf(mine.message, sizeof mine.message, "killed itself (SIGKILL) as planned");
    mine.end = now_seconds();
    mine.state.store(kPass);
    kill(getpid(), SIGKILL);
    pause();
  }
  recv_from_victim = e.irecv(victim, small.data(), small.size(), never);
  send_to_victim = e.isend(victim, out.data(), big, unreceived);
  e.barrier();

  // The victim dies now; everything pending on it must fail within 10 s.
  double t0 = now_seconds();
  const double limit = 10.0;
  Completion rc, sc;
  bool rdone = false, sdone = false;
  bool peer_seen = e.t.check_peer == nullptr;
  while (!(rdone && sdone && peer_seen)) {
    if (!rdone) rdone = e.poll(recv_from_victim, &rc, "receive from the dead rank");
    if (!sdone) sdone = e.poll(send_to_victim, &sc, "send to the dead rank");
    if (!peer_seen) {
      e.last_error.clear();
      smd_transport_status_t s = e.t.check_peer(e.ctx, e.ep[size_t(victim)]);
      if (s == SMD_TRANSPORT_ERR_PEER) peer_seen = true;
      else if (s != SMD_TRANSPORT_OK)
        e.fail("check_peer on the dead rank returned %s", describe(s, e.last_error).c_str());
    }
    if (now_seconds() - t0 > limit)
      e.fail("%s %.0f s after rank %d died",
             !rdone   ? "a receive from it was still pending"
             : !sdone ? "a 1 MiB send to it was still pending"
                      : "check_peer still reported it alive",
             limit, victim);
    e.idle();
  }
  e.note("noticed in %.2f s", now_seconds() - t0);
  if (rc.status != SMD_TRANSPORT_ERR_PEER)
    e.fail("a receive from the dead rank completed with %s, expected ERR_PEER",
           describe(rc.status, rc.error).c_str());
  if (sc.status != SMD_TRANSPORT_ERR_PEER && sc.status != SMD_TRANSPORT_OK)
    e.fail("a send to the dead rank completed with %s, expected ERR_PEER",
           describe(sc.status, sc.error).c_str());
  if (e.verbose) e.note("the plugin said: %s", rc.error.c_str());

  // New requests to the dead rank fail too (at once or on test).
  void *out_mr = e.register_if_required(out.data(), big);
  void *in_mr = e.register_if_required(in.data(), big);
  void *req = nullptr;
  e.last_error.clear();
  smd_transport_status_t s =
      e.t.isend(e.ctx, e.ep[size_t(victim)], out.data(), 8, out_mr, e.tag(4), &req);
  if (s == SMD_TRANSPORT_OK) {
    Completion c = e.wait(req, "send to a rank known to be dead");
    s = c.status;
  }
  if (s != SMD_TRANSPORT_ERR_PEER)
    e.fail("a send to a rank known to be dead gave %s, expected ERR_PEER", status_name(s));

  // The victim's 1 MiB message: delivered whole before it died, or ERR_PEER.
  req = nullptr;
  e.last_error.clear();
  s = e.t.irecv(e.ctx, e.ep[size_t(victim)], in.data(), big, in_mr, orphan, &req);
  if (s == SMD_TRANSPORT_OK) {
    Completion c = e.wait(req, "receive of the dead rank's last message");
    s = c.status;
    if (s == SMD_TRANSPORT_OK)
      e.check_pattern(in.data(), big, pattern_seed(victim, orphan, 0),
                      "the dead rank's last message");
  }
  if (s != SMD_TRANSPORT_ERR_PEER && s != SMD_TRANSPORT_OK)
    e.fail("receiving the dead rank's last message gave %s", status_name(s));
  for (void *mr : {out_mr, in_mr})
    if (mr != nullptr) e.t.mem_deregister(e.ctx, mr);

  // The survivors still talk to each other.
  if (victim >= 2) {
    int to = (e.rank + 1) % victim, from = (e.rank + victim - 1) % victim;
    if (e.t.check_peer != nullptr)
      e.check(e.t.check_peer(e.ctx, e.ep[size_t(to)]), "check_peer on a live rank");
    uint64_t tag = e.tag(5);
    pattern_fill(out.data(), big, pattern_seed(e.rank, tag, 0));
    void *r = e.irecv(from, in.data(), big, tag);
    e.expect_ok(e.isend(to, out.data(), big, tag), "send between survivors");
    e.expect_ok(r, "receive between survivors");
    e.check_pattern(in.data(), big, pattern_seed(from, tag, 0), "receive between survivors");
  }
  e.barrier();
}

void test_finalize(Env &e) {
  if (e.ctx == nullptr) e.skip("no context: init failed");
  // Disconnect half the endpoints; finalize must release the rest.
  for (int p = 0; p < e.nranks; ++p)
    if (e.ep.size() > size_t(p) && e.ep[size_t(p)] != nullptr && p % 2 == 0) {
      e.last_error.clear();
      smd_transport_status_t s = e.t.disconnect(e.ctx, e.ep[size_t(p)]);
      if (s != SMD_TRANSPORT_OK)
        e.fail("disconnect from rank %d returned %s", p, describe(s, e.last_error).c_str());
      e.ep[size_t(p)] = nullptr;
    }
  void *ctx = e.ctx;
  e.ctx = nullptr;
  e.connected = false;
  e.last_error.clear();
  smd_transport_status_t s = e.t.finalize(ctx);
  if (s != SMD_TRANSPORT_OK) e.fail("finalize returned %s", describe(s, e.last_error).c_str());
  std::vector<std::string> held = shared_memory_held();
  if (!held.empty()) {
    std::string list;
    for (const std::string &h : held) list += (list.empty() ? "" : ", ") + h;
    e.fail("after finalize the process still holds shared memory: %s", list.c_str());
  }
}

}  // namespace tcheck
