// The shared-memory arena of a communicator whose members share a node:
// every member maps every member's segment, so the direct algorithms move
// data by plain loads and stores with no messages at all.
//
// Each member's segment holds three monotonic counters, operation
// descriptors and a doorbell in its header, then kRounds small staging
// buffers and kSlots large ones, used in turn by "rounds". A collective is a
// sequence of rounds; every member takes part in every round, so rounds are
// numbered identically on all members. In round R a member:
//   1. waits until all members consumed the round that last used the
//      buffer it will fill (R-kSlots for a large buffer, R-kRounds for a
//      small one), then fills its own;
//   2. posts R (posted = R+1) and waits until the members it reads from
//      posted R;
//   3. reads peers' buffers (and may write results into its own,
//      posting `reduced` so peers can copy them);
//   4. marks R consumed.
// The counters never reset, so no extra synchronisation separates
// collectives. A member may run up to kRounds-1 rounds of small operations
// ahead of the slowest (kSlots-1 of large ones): a broadcast root, which
// waits for nobody, can post many small broadcasts before its receivers
// are scheduled (what matters when ranks outnumber cores).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <sys/types.h>

#include "core/util/ring_queue.h"

namespace smd {

class Comm;
class Waiter;
class Transport;

// What a member says about the collective it is running (checked for
// agreement on every member in the collective's first round).
struct alignas(64) OpDesc {
  uint64_t round;  // first round of the operation
  // Narrow fields (every value fits a byte) leave the line room for data.
  uint8_t kind;
  uint8_t datatype;
  uint8_t op;
  uint8_t has_subject = 0;  // CollArgs::subject, mixed into root (direct.cc)
  int32_t root;
  uint64_t count;
  // The staged data of a one-round operation this small travels in the
  // descriptor's cache line, and `ready` (round + 1, written last) posts
  // it there: a reader polls and reads one line, not a counter, a
  // descriptor and a buffer.
  static constexpr size_t kInlineBytes = 32;
  alignas(8) uint8_t payload[kInlineBytes];
  uint64_t ready;
};

class Arena {
 public:
  // Collective among comm's members (exchanges segment handles).
  static std::unique_ptr<Arena> create(Comm &comm, Transport &transport);
  ~Arena();

  int size() const { return size_; }
  int rank() const { return rank_; }
  // Bytes one member stages per round.
  size_t chunk() const { return chunk_; }
  // Member r's large staging buffer of round R (chunk() bytes).
  uint8_t *buf(int r, uint64_t round) const {
    return bases_[r] + kHeaderBytes + kRounds * kSmallBytes + (round % kSlots) * chunk_;
  }
  // Member r's small staging buffer of round R (kSmallBytes).
  uint8_t *small_buf(int r, uint64_t round) const {
    return bases_[r] + kHeaderBytes + (round % kRounds) * kSmallBytes;
  }
  OpDesc &desc(int r, uint64_t round) const {
    return *reinterpret_cast<OpDesc *>(bases_[r] + kDescOffset +
                                       (round % kRounds) * sizeof(OpDesc));
  }

  // Rounds are taken in order; begin_op reserves the next n.
  uint64_t reserve_rounds(uint64_t n) {
    uint64_t first = next_round_;
    next_round_ += n;
    return first;
  }

  // Step 1: the buffer of `round` (small or large) may be rewritten.
  void wait_reusable(uint64_t round, bool small, Waiter &w);
  // Whether wait_reusable(round, small=true) would return at once, known
  // from the counters this member saw last (no peer's line is read).
  // Rounds below this every member has consumed (so also posted), as far
  // as this member last looked.
  uint64_t consumed_by_all_seen() const { return min_consumed_seen_; }
  bool small_reusable_known(uint64_t round) const {
    return round < kRounds || min_consumed_seen_ >= round - kRounds + 1;
  }
  // Step 2. `wake`: ring sleeping peers; a member nobody waits for (a
  // broadcast's receiver) skips it, and the fence it costs.
  void post(uint64_t round, bool wake = true);
  void wait_posted(uint64_t round, Waiter &w);
  void wait_posted_by(int r, uint64_t round, Waiter &w);
  // Posting and waiting for a one-round operation with an inline payload:
  // every member (or only `only`) published `round` in its descriptor, or
  // posted it without doing so (an operation of other arguments, which the
  // caller's agreement check then reports).
  void post_ready(uint64_t round);
  void wait_ready(uint64_t round, Waiter &w, int only = -1);
  // Whether every member's (or only `only`'s) descriptor of `round` is
  // ready now: one look at each line, no waiting.
  bool ready_now(uint64_t round, int only = -1) const {
    for (int r = 0; r < size_; ++r) {
      if (r == rank_ || (only >= 0 && r != only)) continue;
      if (__atomic_load_n(&desc(r, round).ready, __ATOMIC_ACQUIRE) <= round) return false;
    }
    return true;
  }
  void post_reduced(uint64_t round);  // step 3
  void wait_reduced(uint64_t round, Waiter &w);
  void wait_reduced_by(int r, uint64_t round, Waiter &w);
  void post_consumed(uint64_t round);  // step 4

  // Abort, told through shared memory: every member sees it at once.
  void mark_aborted();
  // The lowest member that aborted, or -1.
  int aborted_by() const;
  // Whether any member aborted (inline: asked at the start of every call).
  bool any_aborted() const {
    for (const std::atomic<uint32_t> *f : abort_flags_)
      if (f->load(std::memory_order_acquire)) return true;
    return false;
  }

  // Sleeping on this member's doorbell. A waiter that has waited past its
  // spinning marks itself drowsy (peers' posts ring only drowsy members,
  // so posts cost no fence while everybody spins), reads bell() before it
  // looks at its condition again, and sleeps only while the bell still
  // shows that value: a post in between is never slept through.
  void set_drowsy(bool on);
  uint32_t bell() const;
  void sleep(int64_t timeout_us, uint32_t seen);
  void wake_self();
  // Descriptors of operations whose agreement this member could not check
  // when it ran them (a broadcast root waits for nobody); checked once all
  // members are known to have posted those rounds.
  RingQueue<OpDesc> &unverified() { return unverified_; }
  // Scratch for the pointers a reduction reads (one per member), kept here
  // so that an operation allocates nothing.
  std::vector<const void *> &sources() { return sources_; }

  // Inputs read in place (memory from smd_mem_alloc, see shared_memory.h).
  // Publishes this member's block for peers to map; before posting the
  // round that refers to it. False if the handle does not fit the header.
  bool publish_shared(uint64_t id, const std::vector<uint8_t> &handle);
  // Member r's published block `id`, mapped here on first use (a few
  // mappings per member are kept, the least recently used dropped).
  const uint8_t *peer_shared(Comm &comm, int r, uint64_t id);
  // Every member consumed `round` (the end of an operation whose input
  // peers read in place: the caller may change it afterwards).
  void wait_consumed(uint64_t round, Waiter &w);
  // Scratch: where each member's input lies when read in place.
  std::vector<const uint8_t *> &in_place() { return in_place_; }

  // Cross-memory attach (cross_memory.h), probed at setup: whether every
  // member can read every other's memory, or why not; members' pids.
  bool cross_memory() const { return cross_memory_; }
  const std::string &cross_memory_why() const { return cross_memory_why_; }
  pid_t pid(int r) const { return pids_[static_cast<size_t>(r)]; }
  // Scratch: where each member's input lies in its own address space, for
  // cross-memory reads (0: not offered that way).
  std::vector<uint64_t> &remote() { return remote_; }

  // Which members have not yet posted / reduced `round` (for messages).
  std::vector<int> not_posted(uint64_t round) const;

  static constexpr size_t kHeaderBytes = 8192;
  // Where the descriptors begin in a member's header (checked in arena.cc).
  static constexpr size_t kDescOffset = 5 * 64;
  // Large buffers: 4 keep every member's staging in the last-level cache.
  static constexpr uint64_t kSlots = 4;
  // Rounds in flight (descriptors and small buffers): how far a broadcast
  // root may run ahead of receivers that catch up in batches; more rounds
  // cost small allreduces nothing measurable (docs/PERFORMANCE.md, "How
  // many rounds may be in flight").
  static constexpr uint64_t kRounds = 64;
  static constexpr size_t kSmallBytes = 1024;
  // How far ahead of the slowest member a round with these buffers may be.
  static constexpr uint64_t reach(bool small) { return small ? kRounds : kSlots; }

 private:
  struct Header;
  Arena() = default;
  Header &header(int r) const { return *reinterpret_cast<Header *>(bases_[r]); }
  void wake_sleepers();
  void post_counter(int which, uint64_t round, bool wake);
  void wait_counter(int which, uint64_t value, Waiter &w, int only = -1);

  int size_ = 0, rank_ = 0;
  size_t chunk_ = 0;
  uint64_t next_round_ = 0;
  std::vector<uint8_t *> bases_;
  std::vector<const std::atomic<uint32_t> *> abort_flags_;  // each member's
  std::vector<void *> segments_;
  RingQueue<OpDesc> unverified_{kRounds};
  std::vector<const void *> sources_;
  std::vector<const uint8_t *> in_place_;
  std::vector<uint64_t> remote_;
  std::vector<pid_t> pids_;
  bool cross_memory_ = false;
  std::string cross_memory_why_;
  struct PeerBlock {
    uint64_t id;
    const uint8_t *base;
    void *segment;
    uint64_t used;  // use counter value at the last use
  };
  std::vector<std::vector<PeerBlock>> peer_blocks_;  // per member
  uint64_t uses_ = 0;
  uint64_t published_id_ = 0;
  // The last value read of each member's three counters ([member * 3 + which]).
  std::vector<uint64_t> seen_;
  // The least of the members' consumed counters as last seen.
  uint64_t min_consumed_seen_ = 0;
  Transport *transport_ = nullptr;
};

}  // namespace smd
