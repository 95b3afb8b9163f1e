#include "core/coll/agree/call_check.h"

#include <cstring>
#include <optional>

#include "core/coll/coll_state.h"
#include "core/util/clock.h"
#include "core/util/log.h"

namespace smd {

namespace {

// Setup traffic with bits 21 and 20 set: apart from the setup exchanges
// (small values) and agree_on_call (bit 21, bits 0-14).
uint64_t fingerprint_tag(const Comm &c) {
  return make_tag(TagKind::kSetup, c.id(), kSetupCheckFingerprint);
}
uint64_t poison_tag(const Comm &c) { return make_tag(TagKind::kSetup, c.id(), kSetupCheckPoison); }

// A failure one member reports to its neighbours.
struct PoisonMsg {
  int32_t code = 0;
  int32_t from = -1;  // communicator rank that detected it
  char text[504] = {};
};

}  // namespace

// Per communicator, made at its first checked call: the ring neighbours,
// the count of checked calls, the poison receives kept posted from each
// neighbour and the poison sent to them.
struct CheckChannel {
  explicit CheckChannel(Comm &comm) : c(comm) {
    int p = c.size(), me = c.rank();
    neighbours[0] = (me + p - 1) % p;
    neighbours[1] = (me + 1) % p;
    count = neighbours[0] == neighbours[1] ? 1 : 2;
    for (int i = 0; i < count; ++i)
      inbox_req[i] = c.irecv(neighbours[i], &inbox[i], sizeof inbox[i], poison_tag(c));
  }
  ~CheckChannel() {
    for (P2PReq *r : {&inbox_req[0], &inbox_req[1], &outbox_req[0], &outbox_req[1]}) {
      try {
        c.cancel(*r);
      } catch (...) {
      }
    }
  }
  // Throws the failure a neighbour reported, if one arrived.
  void check_inbox() {
    if (std::optional<Error> e = poison_received()) throw *e;
  }
  // The failure a neighbour reported, if one arrived.
  std::optional<Error> poison_received() {
    for (int i = 0; i < count; ++i) {
      if (inbox_done[i]) continue;
      try {
        if (!c.test(inbox_req[i])) continue;
      } catch (const Error &) {
        // A neighbour that exited (or its link) fails this receive; the
        // algorithm's own messages, read first, say whether that matters.
        inbox_done[i] = true;
        continue;
      }
      inbox_done[i] = true;
      PoisonMsg &m = inbox[i];
      m.text[sizeof m.text - 1] = 0;
      smd_result_t code = m.code > 0 ? static_cast<smd_result_t>(m.code) : SMD_ERR_INTERNAL;
      return Error(code, format("%s: rank %d reported: %s", c.where().c_str(), m.from, m.text));
    }
    return std::nullopt;
  }
  // Tells the neighbours, once: the first failure is the one that counts.
  void send_poison(smd_result_t code, const std::string &text) {
    if (sent) return;
    sent = true;
    outbox.code = static_cast<int32_t>(code);
    outbox.from = c.rank();
    snprintf(outbox.text, sizeof outbox.text, "%s", text.c_str());
    for (int i = 0; i < count; ++i) {
      try {
        outbox_req[i] = c.isend(neighbours[i], &outbox, sizeof outbox, poison_tag(c));
      } catch (const Error &e) {
        outbox_req[i].done = true;  // nothing to wait for or cancel
        SMD_TRACE("coll", "poison to rank %d: %s", neighbours[i], e.what());
      }
    }
    // Push the sends out for a moment (a plugin may need progress calls);
    // a dead neighbour must not hold this rank up.
    int64_t until = now_ns() + 200 * 1000000LL;
    for (bool all = false; !all && now_ns() < until;) {
      all = true;
      for (int i = 0; i < count; ++i) {
        try {
          if (!c.test(outbox_req[i])) all = false;
        } catch (...) {
        }
      }
    }
  }

  Comm &c;
  int neighbours[2] = {0, 0};
  int count = 0;
  uint64_t calls = 0;
  PoisonMsg inbox[2], outbox;
  P2PReq inbox_req[2], outbox_req[2];
  bool inbox_done[2] = {false, false};
  bool sent = false;
};

CallCheck::CallCheck(Comm &c, const CollArgs &a)
    : c_(c),
      ch_(*[&c] {
        CollState &st = coll_state(c);
        if (!st.check_channel) st.check_channel = std::make_shared<CheckChannel>(c);
        return st.check_channel.get();
      }()),
      kind_(a.kind),
      reqs_(c) {
  mine_ = fingerprint_of(a, ch_.calls++);
  uint64_t tag = fingerprint_tag(c);
  for (int i = 0; i < ch_.count; ++i)
    recv_[i] = &reqs_.add(c.irecv(ch_.neighbours[i], &theirs_[i], sizeof theirs_[i], tag));
  for (int i = 0; i < ch_.count; ++i)
    reqs_.add(c.isend(ch_.neighbours[i], &mine_, sizeof mine_, tag));
  c.set_tag_salt(tag_salt_of(mine_));
  c.set_wait_hook(this);
}

CallCheck::~CallCheck() {
  c_.set_wait_hook(nullptr);
  c_.set_tag_salt(0);
}

void CallCheck::compare(int i, const CallFingerprint &theirs) const {
  if (recv_[i]->bytes != sizeof theirs)
    fail(SMD_ERR_PEER_FAILURE,
         "%s on %s: rank %d (world rank %d) ended its call check message after %zu bytes: it "
         "exited or its link failed",
         coll_name(kind_), c_.where().c_str(), ch_.neighbours[i], c_.world_rank(ch_.neighbours[i]),
         recv_[i]->bytes);
  if (theirs == mine_) return;
  fail(SMD_ERR_MISMATCH,
       "%s on %s: the ranks called different collectives or with different arguments: %s on "
       "rank %d, %s on rank %d",
       coll_name(kind_), c_.where().c_str(), describe(mine_, mine_.seq != theirs.seq).c_str(),
       c_.rank(), describe(theirs, mine_.seq != theirs.seq).c_str(), ch_.neighbours[i]);
}

void CallCheck::poll() {
  // A hierarchical collective waits on two threads at once (its rail phase
  // runs on the rail's worker): one of them polls.
  std::unique_lock<std::recursive_mutex> lock(mu_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  for (int i = 0; i < ch_.count; ++i)
    if (c_.test(*recv_[i])) compare(i, theirs_[i]);
  ch_.check_inbox();
}

void CallCheck::finish() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  c_.wait_ptrs(recv_, static_cast<size_t>(ch_.count), "agreement check");
  for (int i = 0; i < ch_.count; ++i) compare(i, theirs_[i]);
  ch_.check_inbox();
  reqs_.wait_all("agreement check");
}

Error CallCheck::failed(const Error &e) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  Error out = e;
  if (e.code() != SMD_ERR_MISMATCH) {
    // A neighbour that ran another call explains whatever went wrong.
    try {
      for (int i = 0; i < ch_.count; ++i)
        if (recv_[i]->done || c_.test(*recv_[i])) compare(i, theirs_[i]);
    } catch (const Error &m) {
      if (m.code() == SMD_ERR_MISMATCH) out = m;
    } catch (...) {
    }
  }
  // A neighbour's earlier failure is what this one follows from (its data
  // left, then it failed and went: a dead link here is its consequence).
  if (out.code() != SMD_ERR_MISMATCH) {
    try {
      if (std::optional<Error> p = ch_.poison_received()) out = *p;
    } catch (...) {
    }
  }
  c_.set_wait_hook(nullptr);
  ch_.send_poison(out.code(), out.message());
  return out;
}

}  // namespace smd
