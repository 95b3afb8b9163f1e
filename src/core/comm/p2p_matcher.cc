#include "core/comm/p2p_matcher.h"

#include "core/comm/tags.h"
#include "core/util/error.h"

namespace smd {

namespace {
bool matches(const P2PMatcher::Recv &r, int peer, const P2PMatcher::Envelope &e) {
  return (r.peer == P2PMatcher::kAnySource || r.peer == peer) &&
         (r.tag == P2PMatcher::kAnyTag || r.tag == e.tag);
}
}  // namespace

P2PMatcher::P2PMatcher(Comm &c)
    : comm_(c), envelope_tag_(make_tag(TagKind::kSetup, c.id(), kSetupUserEnvelope)) {}

P2PMatcher::~P2PMatcher() {
  std::lock_guard<std::mutex> lock(mu_);
  for (Listener &l : listeners_)
    if (l.posted) comm_.cancel(l.req);
  for (OutgoingReceipt &o : receipts_) comm_.cancel(o.req);
}

namespace {
uint64_t receipt_tag(const Comm &c) { return make_tag(TagKind::kSetup, c.id(), kSetupUserReceipt); }
}  // namespace

void P2PMatcher::isend_with_receipt(int peer, const void *buf, size_t bytes, int tag, Envelope *env,
                                    P2PReq *env_req, P2PReq *data_req, Receipt *receipt,
                                    P2PReq *receipt_req) {
  // Posted first: the receipt may come back as soon as the payload is out.
  *receipt_req = comm_.irecv(peer, receipt, sizeof *receipt, receipt_tag(comm_));
  env->flags = kWantsReceipt;
  try {
    isend(peer, buf, bytes, tag, env, env_req, data_req);
  } catch (...) {
    comm_.cancel(*receipt_req);
    throw;
  }
}

void P2PMatcher::send_receipt_locked(const Recv &r) {
  if (!r.wants_receipt) return;
  receipts_.push_back({Receipt{r.capacity, r.error, 0}, P2PReq{}});
  OutgoingReceipt &o = receipts_.back();
  try {
    o.req = comm_.isend(r.source, &o.receipt, sizeof o.receipt, receipt_tag(comm_));
    pending_.store(true, std::memory_order_relaxed);  // poke() drives it on
  } catch (const Error &) {
    receipts_.pop_back();  // the sender's rank failed: it learns of that instead
  }
}

void P2PMatcher::progress_receipts_locked() {
  while (!receipts_.empty()) {
    try {
      if (!comm_.test(receipts_.front().req)) return;
    } catch (const Error &) {
      // As above: a sender that failed needs no receipt.
    }
    receipts_.pop_front();
  }
}

void P2PMatcher::isend(int peer, const void *buf, size_t bytes, int tag, Envelope *env,
                       P2PReq *env_req, P2PReq *data_req) {
  env->bytes = bytes;
  env->tag = tag;
  // Envelope and payload leave together: another thread's pair between
  // them would give the receiver this envelope with that payload.
  std::lock_guard<std::mutex> lock(send_mu_);
  *env_req = comm_.isend(peer, env, sizeof *env, envelope_tag_);
  *data_req = comm_.isend(peer, buf, bytes, make_tag(TagKind::kP2P, comm_.id(), uint32_t(tag)));
}

std::shared_ptr<P2PMatcher::Recv> P2PMatcher::irecv(int peer, int tag, void *buf, size_t capacity,
                                                    bool exact) {
  auto r = std::make_shared<Recv>(
      Recv{.peer = peer, .tag = tag, .buf = buf, .capacity = capacity, .exact = exact});
  std::lock_guard<std::mutex> lock(mu_);
  waiting_.push_back(r);
  pending_.store(true, std::memory_order_relaxed);
  progress_locked();
  return r;
}

void P2PMatcher::fail_peer_locked(int peer, smd_result_t code, const std::string &message) {
  Listener &l = listeners_[size_t(peer)];
  l.posted = false;
  l.error = code;
  l.message = message;
}

void P2PMatcher::progress_locked() {
  if (!started_) {
    listeners_.resize(size_t(comm_.size()));
    started_ = true;
  }
  progress_receipts_locked();
  for (int p = 0; p < comm_.size(); ++p) {
    Listener &l = listeners_[size_t(p)];
    // Several envelopes may be waiting; take a bounded number per call.
    for (int taken = 0; taken < 64 && l.error == SMD_SUCCESS; ++taken) {
      try {
        if (!l.posted) {
          l.req = comm_.irecv(p, &l.env, sizeof l.env, envelope_tag_);
          l.posted = true;
        }
        if (!comm_.test(l.req)) break;
      } catch (const Error &e) {
        fail_peer_locked(p, e.code(), e.message());
        break;
      }
      l.posted = false;
      if (l.req.bytes != sizeof l.env) {
        fail_peer_locked(
            p, SMD_ERR_INTERNAL,
            format("a point-to-point envelope of %zu bytes from rank %d (expected %zu)",
                   l.req.bytes, p, sizeof l.env));
        break;
      }
      arrived_.push_back({p, l.env});
    }
  }
  match_locked();
}

void P2PMatcher::match_locked() {
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    Recv &r = **it;
    auto a = arrived_.begin();
    while (a != arrived_.end() && !matches(r, a->peer, a->env)) ++a;
    if (a == arrived_.end()) {
      // Nothing yet: a failed peer that could have sent it fails it.
      for (int p = 0; p < comm_.size() && !r.done; ++p) {
        const Listener &l = listeners_[size_t(p)];
        if (l.error != SMD_SUCCESS && (r.peer == kAnySource || r.peer == p)) {
          r.done = true;
          r.error = l.error;
          r.message = l.message;
        }
      }
      if (r.done) it = waiting_.erase(it);
      else ++it;
      continue;
    }
    r.matched = true;
    r.source = a->peer;
    r.msg_tag = a->env.tag;
    r.bytes = a->env.bytes;
    r.wants_receipt = (a->env.flags & kWantsReceipt) != 0;
    void *dst = r.buf;
    if (r.bytes > r.capacity) {  // drained, then reported as truncated
      r.discard.resize(r.bytes);
      dst = r.discard.data();
    }
    try {
      r.data = comm_.irecv(r.source, dst, r.bytes,
                           make_tag(TagKind::kP2P, comm_.id(), uint32_t(r.msg_tag)));
    } catch (const Error &e) {
      r.done = true;
      r.error = e.code();
      r.message = e.message();
      send_receipt_locked(r);
    }
    arrived_.erase(a);
    it = waiting_.erase(it);
  }
  pending_.store(!waiting_.empty() || !receipts_.empty(), std::memory_order_relaxed);
}

bool P2PMatcher::test(Recv &r) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!r.done && !r.matched) progress_locked();
  if (!r.done && r.matched) {
    try {
      if (!comm_.test(r.data)) return false;
      r.done = true;
      if (r.bytes > r.capacity) {
        r.error = SMD_ERR_TRUNCATED;
        r.message = format(
            "a message of %zu bytes from rank %d (tag %d) does not fit the %zu bytes "
            "posted; it was dropped",
            r.bytes, r.source, r.msg_tag, r.capacity);
      } else if (r.exact && r.bytes != r.capacity) {
        r.error = SMD_ERR_MISMATCH;
        r.message = format(
            "a message of %zu bytes from rank %d (tag %d) is shorter than the %zu bytes of a "
            "stream-ordered receive, which takes exactly its count",
            r.bytes, r.source, r.msg_tag, r.capacity);
      }
    } catch (const Error &e) {
      r.done = true;
      r.error = e.code();
      r.message = e.message();
    }
    if (r.done) {
      send_receipt_locked(r);
      progress_receipts_locked();
    }
  }
  if (!r.done) return false;
  if (r.error != SMD_SUCCESS) throw Error(r.error, r.message);
  return true;
}

void P2PMatcher::wait(Recv &r, const char *what) {
  if (test(r)) return;
  Waiter w(comm_, what, SleepOn::kTransport);
  w.set_pending([&] {
    if (r.matched) return format("still receiving %zu bytes from rank %d", r.bytes, r.source);
    if (r.peer == kAnySource) return std::string("no message from any rank yet");
    return format("still waiting for rank %d", r.peer);
  });
  try {
    while (!test(r)) w.pause();
  } catch (...) {
    // A timeout or an abort: the buffer may go away with the error, so the
    // receive must not be matched (or go on receiving) afterwards.
    cancel(r);
    throw;
  }
}

void P2PMatcher::cancel(Recv &r) {
  std::lock_guard<std::mutex> lock(mu_);
  if (r.done) return;
  r.done = true;
  if (r.error == SMD_SUCCESS) {
    r.error = SMD_ERR_ABORTED;
    r.message = "the receive was cancelled";
  }
  if (r.matched) {
    try {
      comm_.cancel(r.data);
    } catch (...) {
    }
    send_receipt_locked(r);
    return;
  }
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it)
    if (it->get() == &r) {
      waiting_.erase(it);
      break;
    }
  pending_.store(!waiting_.empty() || !receipts_.empty(), std::memory_order_relaxed);
}

void P2PMatcher::poke() {
  if (!pending_.load(std::memory_order_relaxed)) return;
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  if (lock.owns_lock()) progress_locked();
}

}  // namespace smd
