#include "core/comm/communicator.h"

#include <sched.h>

#include <cstring>
#include <set>
#include <thread>

#include "core/comm/arena.h"
#include "core/comm/p2p_matcher.h"
#include "core/exec/futex.h"
#include "core/exec/interrupt.h"
#include "core/util/error.h"
#include "core/util/log.h"

namespace smd {

// ---------------------------------------------------------------- Waiter

namespace {
// About a microsecond of polling.
constexpr uint32_t kQuickPolls = 32;
// A drowsy mark this old is seen by every peer's next post.
constexpr int64_t kDrowsyBeforeSleepNs = 100000;
}  // namespace

Waiter::Waiter(Comm &comm, const char *what, SleepOn sleep_on)
    : comm_(comm),
      what_(what),
      sleep_on_(sleep_on),
      backoff_(comm.ctx().wait_policy()),
      // Oversubscribed ranks yield at once: not even a microsecond of spinning.
      quick_limit_(comm.ctx().wait_policy().spin_ns > 0 ? kQuickPolls : 0) {}

Waiter::~Waiter() {
  if (drowsy_) comm_.arena()->set_drowsy(false);
}

void Waiter::arm() {
  int64_t now = now_ns();
  int64_t timeout = comm_.ctx().timeout_ms();
  deadline_ns_ = timeout > 0 ? now + timeout * 1000000 : INT64_MAX;
  next_health_ns_ = now;
}

void Waiter::check() {
  // Ended here: this rank knows how, without asking the store.
  if (comm_.aborted())
    fail(comm_.revoked() ? SMD_ERR_REVOKED : SMD_ERR_ABORTED, "%s on %s: the communicator was %s",
         what_, comm_.where().c_str(), comm_.revoked() ? "revoked" : "aborted");
  if (Arena *a = comm_.arena()) {
    int by = a->aborted_by();
    if (by >= 0) {
      smd_result_t code = comm_.end_code();
      fail(code, "%s on %s: rank %d %s the communicator", what_, comm_.where().c_str(), by,
           code == SMD_ERR_REVOKED ? "revoked" : "aborted");
    }
  }
  if (WaitHook *hook = comm_.wait_hook()) hook->poll();
  int64_t now = now_ns();
  if (interrupt_requested(now)) {
    // The call cannot stop half-way alone: its peers are told (as by
    // smd_comm_abort), and its buffers are released with the error. A wait
    // in an adopted communicator (a hierarchical call's node phase) aborts
    // the one the caller called too.
    for (Comm *c = &comm_; c != nullptr; c = c->parent_) {
      c->abort_local();
      c->ctx().announce_abort(c->abort_key());
    }
    fail(SMD_ERR_ABORTED,
         "%s on %s: interrupted (SIGINT on the interrupt fd, smd_set_interrupt_fd); "
         "the communicator was aborted",
         what_, comm_.where().c_str());
  }
  if (now >= deadline_ns_ && !grace_used_ && in_node_phase()) {
    // A wait on node peers inside a call that spans nodes usually waits
    // for a leader that waits across the network: both reach SMD_TIMEOUT
    // at about the same moment. A quarter more time lets the leader's
    // report, which names the rank across the cut, arrive first and end
    // this wait with the cause instead of a symptom.
    grace_used_ = true;
    deadline_ns_ = now + comm_.ctx().timeout_ms() * 1000000 / 4;
  }
  if (now >= deadline_ns_) {
    std::string pending = pending_ ? pending_() : "";
    fail(SMD_ERR_TIMEOUT, "%s on %s timed out after %.1f s (SMD_TIMEOUT)%s%s", what_,
         comm_.where().c_str(), comm_.ctx().timeout_ms() / 1000.0, pending.empty() ? "" : ": ",
         pending.c_str());
  }
  // Peers are checked only when one wait has lasted long: healthy waits are short.
  if (backoff_.elapsed_ns() > 100 * 1000000LL && now >= next_health_ns_) {
    next_health_ns_ = now + 200 * 1000000LL;
    try {
      comm_.ctx().check_health(comm_.health_members(), comm_.abort_key(), what_);
    } catch (const Error &e) {
      // Later calls here fail at once with the same code, as on the rank
      // that revoked.
      if (e.code() == SMD_ERR_REVOKED)
        for (Comm *c = &comm_; c != nullptr; c = c->parent_) c->revoke_local();
      throw;
    }
  }
}

bool Waiter::in_node_phase() const {
  return sleep_on_ == SleepOn::kArena && comm_.parent_ != nullptr &&
         comm_.parent_->size() > comm_.size();
}

void Waiter::pause() {
  if (quick_polls_ < quick_limit_) {
    ++quick_polls_;
    cpu_relax();
    return;
  }
  if (deadline_ns_ < 0) arm();
  // Receives the user posted on this communicator keep matching while
  // this thread waits for something else.
  if (P2PMatcher *m = comm_.user_p2p_started_.load(std::memory_order_relaxed)) m->poke();
  int64_t sleep_us = 0;
  Backoff::Action a = backoff_.next(&sleep_us);
  if (a != Backoff::Action::kSpin || (backoff_.polls() & 1023) == 0) check();
  Arena *arena = sleep_on_ == SleepOn::kArena ? comm_.arena() : nullptr;
  if (arena && !drowsy_ && a != Backoff::Action::kSpin && backoff_.may_sleep() &&
      backoff_.past_spin()) {
    // Peers' posts ring from now on. Marked long before the first sleep
    // (the yield phase lasts milliseconds), so that a post racing with the
    // mark cannot be slept through; a policy without that phase yields a
    // while first (below).
    arena->set_drowsy(true);
    drowsy_ = true;
    drowsy_since_ns_ = now_ns();
    bell_seen_ = arena->bell();
  }
  if (a == Backoff::Action::kSleep && arena && now_ns() - drowsy_since_ns_ < kDrowsyBeforeSleepNs)
    a = Backoff::Action::kYield;
  switch (a) {
    case Backoff::Action::kSpin: cpu_relax(); break;
    case Backoff::Action::kYield: sched_yield(); break;
    case Backoff::Action::kSleep:
      if (arena) {
        arena->sleep(sleep_us, bell_seen_);
      } else {
        // Every transport that can sleep gets a share of the time in turn:
        // one that slept the whole time would miss the others' traffic
        // (shm inside the node and a network plugin between nodes).
        const std::vector<Transport *> &ts = comm_.ctx().transports();
        int waitable = 0;
        for (Transport *t : ts) waitable += t->has_wait() ? 1 : 0;
        if (waitable == 0) {
          std::this_thread::sleep_for(std::chrono::microseconds(sleep_us < 200 ? sleep_us : 200));
        } else {
          int64_t share = sleep_us / waitable > 0 ? sleep_us / waitable : 1;
          for (Transport *t : ts)
            if (t->has_wait()) t->wait(share);
        }
      }
      break;
  }
  // Read before the caller looks at its condition again: a post after that
  // look changes the bell, and the next sleep returns at once.
  if (drowsy_) bell_seen_ = arena->bell();
}

// ---------------------------------------------------------------- Comm

Comm::Comm(std::shared_ptr<Context> ctx, uint32_t id, std::vector<int> members, int my_index)
    : ctx_(std::move(ctx)),
      id_(id),
      members_(std::move(members)),
      rank_(my_index),
      size_(static_cast<int>(members_.size())),
      tag_space_(coll_tag_space(id_, size_)) {
  placement_ = place(ctx_->topology(), members_, rank_);
  abort_key_ = format("smd/abort/%u/%d", id_, members_[0]);
  health_members_ = members_;
  FlightIdentity who{ctx_->rank(), ctx_->size(), id_, members_[0], rank_, size_};
  flight_ = std::make_unique<FlightRecorder>(flight_recorder_capacity(), flight_dump_dir(), who);
}

Comm::~Comm() {
  executor_.stop();
  user_p2p_started_.store(nullptr);
  user_p2p_.reset();
  coll_state_.reset();
  children_.clear();
  arena_.reset();
}

bool Comm::has_stream_proxy() {
  std::lock_guard<std::mutex> lock(stream_proxy_mu_);
  return stream_proxy_ != nullptr;
}

std::shared_ptr<StreamProxy> Comm::stream_proxy(
    const std::function<std::shared_ptr<StreamProxy>()> &make) {
  std::lock_guard<std::mutex> lock(stream_proxy_mu_);
  if (!stream_proxy_) stream_proxy_ = make();
  return stream_proxy_;
}

P2PMatcher &Comm::user_p2p() {
  std::lock_guard<std::mutex> lock(user_p2p_mu_);
  if (!user_p2p_) {
    user_p2p_ = std::make_unique<P2PMatcher>(*this);
    user_p2p_started_.store(user_p2p_.get());
  }
  return *user_p2p_;
}

void Comm::adopt_child(std::shared_ptr<Comm> child) {
  child->abort_key_ = abort_key_;
  child->parent_ = this;
  child->health_members_ = health_members_;
  if (aborted()) child->abort_local();
  std::lock_guard<std::mutex> lock(children_mu_);
  children_.push_back(std::move(child));
}

std::vector<std::shared_ptr<Comm>> Comm::children() const {
  std::lock_guard<std::mutex> lock(children_mu_);
  return children_;
}

void Comm::count_traffic(int peer, const Transport *t, size_t bytes, bool sent) {
  const std::vector<Transport *> &ts = ctx_->transports();
  for (size_t i = 0; i < ts.size() && i < TrafficCounters::kTransportSlots; ++i)
    if (ts[i] == t)
      (sent ? traffic_.sent : traffic_.received)[i].fetch_add(bytes, std::memory_order_relaxed);
  const Topology &topo = ctx_->topology();
  bool remote = topo.node_of[size_t(members_[peer])] != topo.node_of[size_t(members_[rank_])];
  std::atomic<uint64_t> &c = remote
                                 ? (sent ? traffic_.inter_node_sent : traffic_.inter_node_received)
                                 : (sent ? traffic_.intra_node_sent : traffic_.intra_node_received);
  c.fetch_add(bytes, std::memory_order_relaxed);
}

std::string Comm::where() const {
  return format("rank %d/%d of comm %u (world rank %d)", rank_, size_, id_, members_[rank_]);
}

void Comm::setup() {
  Transport *local = ctx_->local_transport();
  bool all_local =
      placement_.single_node && size_ > 1 && local && local->has(SMD_TRANSPORT_CAP_SEGMENTS);
  if (all_local)
    for (int r = 0; r < size_; ++r)
      if (r != rank_ && ctx_->transport_to(members_[r]) != local) all_local = false;
  if (all_local) arena_ = Arena::create(*this, *local);
}

P2PReq Comm::isend(int peer, const void *buf, size_t size, uint64_t tag) {
  P2PReq r;
  r.peer = peer;
  r.send = true;
  r.tag = tag;
  r.capacity = size;
  if (ctx_->tracer()) r.posted_us = Tracer::now_us();
  int w = members_[peer];
  if (peer == rank_) {
    ctx_->self_channel().send(tag, buf, size);
    r.done = true;
    r.bytes = size;
    if (r.posted_us) trace_done(r);
    return r;
  }
  r.transport = ctx_->transport_to(w);
  r.handle = r.transport->isend(ctx_->endpoint(w), buf, size, tag, w);
  count_traffic(peer, r.transport, size, true);
  if (!r.handle) {
    r.done = true;
    r.bytes = size;
    if (r.posted_us) trace_done(r);
  }
  return r;
}

P2PReq Comm::irecv(int peer, void *buf, size_t size, uint64_t tag) {
  P2PReq r;
  r.peer = peer;
  r.tag = tag;
  if (ctx_->tracer()) r.posted_us = Tracer::now_us();
  int w = members_[peer];
  if (peer == rank_) {
    r.self_recv = true;
    r.buf = buf;
    r.capacity = size;
    return r;
  }
  r.transport = ctx_->transport_to(w);
  r.handle = r.transport->irecv(ctx_->endpoint(w), buf, size, tag, w);
  if (!r.handle) {
    r.done = true;
    r.bytes = size;
    count_traffic(peer, r.transport, size, false);
    if (r.posted_us) trace_done(r);
  }
  return r;
}

bool Comm::test(P2PReq &r) {
  if (r.done) return true;
  if (r.self_recv) {
    size_t got = 0;
    if (!ctx_->self_channel().try_recv(r.tag, r.buf, r.capacity, &got)) return false;
    r.done = true;
    r.bytes = got;
    if (r.posted_us) trace_done(r);
    return true;
  }
  size_t bytes = 0;
  try {
    if (!r.transport->test(r.handle, &bytes, members_[r.peer])) return false;
  } catch (...) {
    r.handle = nullptr;  // the plugin released it when it reported the failure
    r.done = true;
    throw;
  }
  r.handle = nullptr;
  r.done = true;
  r.bytes = bytes;
  count_traffic(r.peer, r.transport, bytes, false);
  if (r.posted_us) trace_done(r);
  return true;
}

void Comm::trace_done(const P2PReq &r) {
  ctx_->tracer()->transfer(ctx_->trace_track(id_), r.send, members_[r.peer],
                           r.send ? r.capacity : r.bytes, r.tag, r.posted_us);
}

void Comm::wait(P2PReq &r, const char *what) { wait_all(&r, 1, what); }

void Comm::wait_all(P2PReq *reqs, size_t n, const char *what) {
  std::vector<P2PReq *> ptrs(n);
  for (size_t i = 0; i < n; ++i) ptrs[i] = &reqs[i];
  wait_ptrs(ptrs.data(), n, what);
}

void Comm::wait_ptrs(P2PReq *const *reqs, size_t n, const char *what) {
  size_t first = 0;
  while (first < n && test(*reqs[first])) ++first;
  if (first == n) return;
  Waiter w(*this, what, SleepOn::kTransport);
  w.set_pending([&] {
    // Each peer once (a send and a receive to one peer are two requests),
    // with its world rank: on a sub-communicator (a node's rail, say) the
    // local number alone does not say which process is missing.
    std::set<int> peers;
    for (size_t i = 0; i < n; ++i)
      if (!reqs[i]->done) peers.insert(reqs[i]->peer);
    std::string s = "still waiting for ranks";
    for (int p : peers) {
      s += ' ';
      s += std::to_string(p);
      if (world_rank(p) != p) s += " (world rank " + std::to_string(world_rank(p)) + ")";
    }
    return s;
  });
  try {
    for (;;) {
      bool all = true;
      for (size_t i = first; i < n; ++i)
        if (!test(*reqs[i])) all = false;
      if (all) return;
      w.pause();
    }
  } catch (...) {
    // The buffers may go away with the error: the plugin must let go.
    for (size_t i = 0; i < n; ++i) {
      try {
        cancel(*reqs[i]);
      } catch (...) {
      }
    }
    throw;
  }
}

void Comm::cancel(P2PReq &r) {
  if (r.done || r.self_recv) {
    r.done = true;
    return;
  }
  if (r.handle) r.transport->cancel(r.handle);
  r.handle = nullptr;
  r.done = true;
}

void Comm::sendrecv(int to, const void *sbuf, size_t ssize, int from, void *rbuf, size_t rsize,
                    uint64_t tag, const char *what) {
  ReqSet set(*this);
  set.add(irecv(from, rbuf, rsize, tag));
  set.add(isend(to, sbuf, ssize, tag));
  set.wait_all(what);
}

std::vector<Bytes> Comm::exchange(const Bytes &mine, TagKind kind, uint32_t comm_field,
                                  uint32_t low) {
  std::vector<Bytes> all(size_);
  all[rank_] = mine;
  if (size_ == 1) return all;
  uint64_t len_tag = make_tag(kind, comm_field, low * 2);
  uint64_t data_tag = make_tag(kind, comm_field, low * 2 + 1);
  std::vector<uint64_t> lens(size_, 0);
  uint64_t my_len = mine.size();
  {
    ReqSet set(*this);
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      set.add(irecv(r, &lens[r], sizeof(uint64_t), len_tag));
      set.add(isend(r, &my_len, sizeof my_len, len_tag));
    }
    set.wait_all("setup exchange");
  }
  ReqSet set(*this);
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    if (lens[r] > (64u << 20))
      fail(SMD_ERR_TRANSPORT, "setup exchange: rank %d announced %llu bytes", r,
           static_cast<unsigned long long>(lens[r]));
    all[r].resize(lens[r]);
    set.add(irecv(r, all[r].data(), lens[r], data_tag));
    set.add(isend(r, mine.data(), mine.size(), data_tag));
  }
  set.wait_all("setup exchange");
  return all;
}

void Comm::check_usable() const {
  if (revoked()) fail(SMD_ERR_REVOKED, "%s: the communicator was revoked", where().c_str());
  if (aborted()) fail(SMD_ERR_ABORTED, "%s: the communicator was aborted", where().c_str());
  if (poisoned_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(poison_mu_);
    throw Error(poison_code_, "communicator unusable after an earlier failure: " + poison_message_);
  }
}

bool Comm::poison(smd_result_t code, const std::string &message) {
  {
    std::lock_guard<std::mutex> lock(poison_mu_);
    if (poisoned_.load()) return false;
    poison_code_ = code;
    poison_message_ = message;
    poisoned_.store(true, std::memory_order_release);
  }
  for (auto &child : children()) child->poison(code, message);
  return true;
}

Error Comm::settle_failure(const Error &e) {
  if (poisoned_.load(std::memory_order_acquire)) return e;
  Error cause = ctx_->failure_that_stands(abort_key_, e);
  poison(cause.code(), cause.message());
  return cause;
}

void Comm::revoke_local() {
  revoked_.store(true, std::memory_order_relaxed);
  for (auto &child : children()) child->revoke_local();
  abort_local();
}

smd_result_t Comm::end_code() {
  if (revoked()) return SMD_ERR_REVOKED;
  if (ctx_->revoke_announced(abort_key_)) {
    revoke_local();
    return SMD_ERR_REVOKED;
  }
  return SMD_ERR_ABORTED;
}

void Comm::abort_local() {
  if (!aborted_.exchange(true)) flight_->dump_or_warn("abort");
  if (arena_) arena_->mark_aborted();
  for (auto &child : children()) child->abort_local();
  wake_local();
}

void Comm::wake_local() {
  if (arena_) arena_->wake_self();
}

// ---------------------------------------------------------------- ReqSet

ReqSet::~ReqSet() {
  for (auto &r : reqs_) {
    if (r.done) continue;
    try {
      comm_.cancel(r);
    } catch (...) {
      // Cancelling after a failure may fail too; the request is gone either way.
    }
  }
}

void ReqSet::wait_all(const char *what) {
  std::vector<P2PReq *> ptrs;
  ptrs.reserve(reqs_.size());
  for (auto &r : reqs_) ptrs.push_back(&r);
  comm_.wait_ptrs(ptrs.data(), ptrs.size(), what);
}

}  // namespace smd
