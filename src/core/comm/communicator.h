// A communicator: an ordered set of world ranks that run collectives
// together. Holds this rank's identity in it, its point-to-point layer
// (tags, waits with deadlines, failure checks), its shared-memory arena
// when all members share a node, and the executor that runs its
// operations in issue order.
#pragma once

#include <smd.h>

#include <array>
#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/comm/context.h"
#include "core/observe/flight_recorder.h"
#include "core/comm/tags.h"
#include "core/comm/topology.h"
#include "core/exec/executor.h"
#include "core/exec/wait_policy.h"

namespace smd {

class Arena;
class Comm;
// What the collective layer keeps per communicator (src/core/coll defines
// it; comm only holds it, so comm never depends on coll).
struct CollState;
class P2PMatcher;
class StreamProxy;  // core/coll/stream_proxy.h

// Point-to-point payload one rank moved on a communicator, for
// smd_comm_get_stats. Arena traffic inside a node is not counted.
struct TrafficCounters {
  static constexpr int kTransportSlots = 4;  // by Context::transports() index
  std::array<std::atomic<uint64_t>, kTransportSlots> sent{}, received{};
  std::atomic<uint64_t> inter_node_sent{0}, inter_node_received{0};
  std::atomic<uint64_t> intra_node_sent{0}, intra_node_received{0};
  std::atomic<uint64_t> collectives{0};
};

// A point-to-point transfer in flight. Owned by value; cancel() or finish
// before the buffer goes away (ReqSet does that on errors).
struct P2PReq {
  Transport *transport = nullptr;
  void *handle = nullptr;
  int peer = -1;  // communicator rank
  bool done = false;
  size_t bytes = 0;
  // A receive from self, served by the self channel.
  bool self_recv = false;
  uint64_t tag = 0;
  void *buf = nullptr;
  size_t capacity = 0;  // of a receive's buffer; a send's size
  // With SMD_TRACE: when it was posted, for its event; 0 when off.
  int64_t posted_us = 0;
  bool send = false;
};

// Something a long wait on a communicator also watches (the collective
// layer's call check: a peer that runs another call, or reports a
// failure, ends the wait at once instead of at SMD_TIMEOUT). poll() throws
// smd::Error to end the wait.
class WaitHook {
 public:
  virtual void poll() = 0;

 protected:
  ~WaitHook() = default;
};

// How a wait sleeps once spinning and yielding have not helped.
enum class SleepOn { kTransport, kArena };

// One wait: spins, yields, sleeps; checks abort, the deadline and peer
// health as time passes. Call pause() in the loop that polls a condition.
class Waiter {
 public:
  Waiter(Comm &comm, const char *what, SleepOn sleep_on);
  ~Waiter();
  Waiter(const Waiter &) = delete;
  Waiter &operator=(const Waiter &) = delete;
  // Call before polling a new condition: the wait spins first again (the
  // deadline counts from the first wait).
  void start() {
    quick_polls_ = 0;
    backoff_.reset();
  }
  void pause();
  // Describes what is still awaited, for the timeout message.
  void set_pending(std::function<std::string()> describe) { pending_ = std::move(describe); }

 private:
  void check();
  // Sets the deadline: at the first wait, so that an operation that never
  // waits never reads the clock.
  void arm();
  // A wait in a node's sub-communicator during a call of its parent that
  // spans more ranks (a hierarchical collective's node phase).
  bool in_node_phase() const;
  Comm &comm_;
  const char *what_;
  SleepOn sleep_on_;
  Backoff backoff_;
  int64_t deadline_ns_ = -1;
  // Polls since start(); the first few only pause the CPU: most waits end
  // within a microsecond, before a clock read or a check could matter.
  uint32_t quick_polls_ = 0;
  uint32_t quick_limit_;
  int64_t next_health_ns_ = 0;
  bool grace_used_ = false;
  // Arena waits past spinning: marked drowsy there since drowsy_since_ns_,
  // and the doorbell as read at the end of the last pause.
  bool drowsy_ = false;
  int64_t drowsy_since_ns_ = 0;
  uint32_t bell_seen_ = 0;
  std::function<std::string()> pending_;
};

class Comm : public std::enable_shared_from_this<Comm> {
 public:
  // Members: world ranks in communicator-rank order; my_index: mine.
  Comm(std::shared_ptr<Context> ctx, uint32_t id, std::vector<int> members, int my_index);
  ~Comm();

  // Collective among the members: builds the shared-memory arena when
  // the members share a node and the local transport offers segments.
  void setup();

  Context &ctx() { return *ctx_; }
  const std::shared_ptr<Context> &ctx_ptr() const { return ctx_; }
  uint32_t id() const { return id_; }
  // Its collectives' tags: the id and the step width its size needs.
  CollTagSpace tag_space() const { return tag_space_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  int world_rank(int r) const { return members_[r]; }
  const std::vector<int> &members() const { return members_; }
  const CommPlacement &placement() const { return placement_; }
  Arena *arena() { return arena_.get(); }
  Executor &executor() { return executor_; }
  std::string where() const;  // "rank 2/4 of comm 1" for messages
  // Store key under which an abort of this communicator is announced:
  // ids repeat across disjoint communicators, their lowest member does not.
  const std::string &abort_key() const { return abort_key_; }
  // The world ranks whose health long waits check: the members, or for a
  // sub-communicator its parent's members (a rank that died anywhere in
  // the parent ends the wait, whichever phase it was in).
  const std::vector<int> &health_members() const { return health_members_; }

  // Sub-communicators that the collective layer runs parts of this one's
  // collectives on (a node's ranks, a rail across nodes): they share its
  // fate (abort, poison), its health scope and abort key, and count in
  // its statistics.
  void adopt_child(std::shared_ptr<Comm> child);
  std::vector<std::shared_ptr<Comm>> children() const;

  // The collective layer's per-communicator state (null until it makes it).
  const std::shared_ptr<CollState> &coll_state() const { return coll_state_; }
  void set_coll_state(std::shared_ptr<CollState> s) { coll_state_ = std::move(s); }

  // The proxy of this communicator's stream-ordered calls, made by `make`
  // on first use (callers of any thread may ask; its tasks outlive them).
  std::shared_ptr<StreamProxy> stream_proxy(
      const std::function<std::shared_ptr<StreamProxy>()> &make);
  // Whether a stream-ordered call has been made on it.
  bool has_stream_proxy();

  // Statistics: traffic, collectives run, the last collective's algorithm.
  TrafficCounters &traffic() { return traffic_; }
  const TrafficCounters &traffic() const { return traffic_; }
  // Called by the one thread running this communicator's collective (they
  // run one at a time): a plain increment, no locked read-modify-write on
  // the small-message path.
  void note_collective(const char *algorithm, double predicted_us) {
    traffic_.collectives.store(traffic_.collectives.load(std::memory_order_relaxed) + 1,
                               std::memory_order_relaxed);
    last_algorithm_.store(algorithm, std::memory_order_relaxed);
    last_predicted_us_.store(predicted_us, std::memory_order_relaxed);
    flight_->set_algorithm(algorithm);
  }
  const char *last_algorithm() const { return last_algorithm_.load(std::memory_order_relaxed); }
  double last_predicted_us() const { return last_predicted_us_.load(std::memory_order_relaxed); }

  // The ring of this communicator's last collective calls (never null).
  FlightRecorder &flight() { return *flight_; }

  // Collective sequence number, advanced once per collective run. Bits 4
  // to 9 carry the running call's tag salt (its parent's on a
  // sub-communicator): tags keep 10 bits of it, and calls that differ
  // then rarely share a tag.
  uint64_t next_seq() { return seq_++ ^ (uint64_t(parent_ ? parent_->tag_salt_ : tag_salt_) << 4); }
  uint64_t peek_seq() const { return seq_; }
  void set_tag_salt(uint32_t salt) { tag_salt_ = salt; }

  // The hook long waits on this communicator and its sub-communicators
  // poll while a call runs (null: none).
  void set_wait_hook(WaitHook *h) { wait_hook_ = h; }
  WaitHook *wait_hook() const { return parent_ ? parent_->wait_hook_ : wait_hook_; }

  // Point-to-point on communicator ranks.
  P2PReq isend(int peer, const void *buf, size_t size, uint64_t tag);
  P2PReq irecv(int peer, void *buf, size_t size, uint64_t tag);
  bool test(P2PReq &req);
  void wait(P2PReq &req, const char *what);
  void wait_all(P2PReq *reqs, size_t n, const char *what);
  void wait_ptrs(P2PReq *const *reqs, size_t n, const char *what);
  void cancel(P2PReq &req);
  // Send and receive at once (the shape of most algorithm steps).
  void sendrecv(int to, const void *sbuf, size_t ssize, int from, void *rbuf, size_t rsize,
                uint64_t tag, const char *what);

  // The user's point-to-point messages (smd_send/smd_recv), matched in
  // the core (p2p_matcher.h); made at first use.
  P2PMatcher &user_p2p();

  // Everything-to-everyone exchange of small blobs among the members,
  // on setup tags (used before the arena exists).
  std::vector<Bytes> exchange(const Bytes &mine, TagKind kind, uint32_t comm_field, uint32_t low);

  // Failure state: the first collective failure poisons the communicator.
  void check_usable() const;
  // True when this call poisoned it (the first failure).
  bool poison(smd_result_t code, const std::string &message);
  // After a collective failed here with `e`: the failure that stands
  // (Context::failure_that_stands), which poisons the communicator; `e`
  // itself when an earlier failure here was settled already.
  Error settle_failure(const Error &e);
  smd_result_t async_error() const { return poisoned_.load() ? poison_code_ : SMD_SUCCESS; }
  void abort_local();
  bool aborted() const { return aborted_.load(std::memory_order_relaxed); }
  // smd_comm_revoke: an abort whose calls end with SMD_ERR_REVOKED.
  void revoke_local();
  bool revoked() const { return revoked_.load(std::memory_order_relaxed); }
  // The code of a call that ends because this communicator was ended here
  // or by a peer: SMD_ERR_REVOKED once a revoke is known (asking the store
  // when a peer's abort mark is all there is), else SMD_ERR_ABORTED.
  smd_result_t end_code();

  // Agreements among survivors (core/elastic): how many ran on this
  // communicator, and the world ranks they found failed.
  uint32_t next_agreement() { return agreements_++; }
  std::vector<int> &agreed_failed() { return agreed_failed_; }

  // Wake threads of this rank sleeping in waits of this communicator.
  void wake_local();

 private:
  void count_traffic(int peer, const Transport *t, size_t bytes, bool sent);
  void trace_done(const P2PReq &r);
  friend class Waiter;
  std::shared_ptr<Context> ctx_;
  uint32_t id_;
  std::vector<int> members_;
  int rank_, size_;
  CommPlacement placement_;
  std::string abort_key_;
  std::vector<int> health_members_;
  std::unique_ptr<Arena> arena_;
  std::shared_ptr<CollState> coll_state_;
  std::mutex user_p2p_mu_;
  std::unique_ptr<P2PMatcher> user_p2p_;
  std::atomic<P2PMatcher *> user_p2p_started_{nullptr};
  mutable std::mutex children_mu_;
  std::vector<std::shared_ptr<Comm>> children_;
  TrafficCounters traffic_;
  std::atomic<const char *> last_algorithm_{""};
  std::atomic<double> last_predicted_us_{0};
  uint64_t seq_ = 0;
  uint32_t tag_salt_ = 0;
  CollTagSpace tag_space_;
  WaitHook *wait_hook_ = nullptr;
  Comm *parent_ = nullptr;  // the communicator that adopted this one
  std::unique_ptr<FlightRecorder> flight_;
  std::atomic<bool> aborted_{false};
  std::atomic<bool> revoked_{false};
  uint32_t agreements_ = 0;
  std::vector<int> agreed_failed_;
  std::atomic<bool> poisoned_{false};
  smd_result_t poison_code_ = SMD_SUCCESS;
  std::string poison_message_;
  mutable std::mutex poison_mu_;
  std::mutex stream_proxy_mu_;
  std::shared_ptr<StreamProxy> stream_proxy_;
  Executor executor_;  // last: its worker must stop before the rest goes
};

// Cancels the transfers it holds that have not finished when it goes out
// of scope (an algorithm that throws must not leave receives behind).
class ReqSet {
 public:
  explicit ReqSet(Comm &c) : comm_(c) {}
  ~ReqSet();
  P2PReq &add(P2PReq r) {
    reqs_.push_back(r);
    return reqs_.back();
  }
  void wait_all(const char *what);
  void clear() { reqs_.clear(); }

 private:
  Comm &comm_;
  std::deque<P2PReq> reqs_;  // deque: add() hands out stable references
};

}  // namespace smd
