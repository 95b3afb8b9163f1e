// The shared-memory arena of a communicator whose members share a node:
// every member maps every member's segment, so the direct algorithms move
// data by plain loads and stores with no messages at all.
//
// Each member's segment holds three monotonic counters, an operation
// descriptor and a doorbell in its header, then two staging buffers used
// alternately by "rounds". A collective is a sequence of rounds; every
// member takes part in every round, so rounds are numbered identically on
// all members. In round R a member:
//   1. waits until all members consumed round R-2 (they finished reading
//      the buffer R&1 of everyone), then fills its own buffer R&1;
//   2. posts R (posted = R+1) and waits until all members posted R;
//   3. reads peers' buffers R&1 (and may write results into its own buffer,
//      posting `reduced` so peers can copy them);
//   4. marks R consumed.
// The counters never reset, so no extra synchronisation separates
// collectives, and a member may run one round ahead of the others.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace smd {

class Comm;
class Waiter;
class Transport;

// What a member says about the collective it is running (checked for
// agreement on every member in the collective's first round).
struct alignas(64) OpDesc {
  uint64_t round;  // first round of the operation
  uint32_t kind;
  uint32_t datatype;
  uint32_t op;
  int32_t root;
  uint64_t count;
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
  // Member r's staging buffer of round R.
  uint8_t *buf(int r, uint64_t round) const {
    return bases_[r] + kHeaderBytes + (round & 1) * chunk_;
  }
  OpDesc &desc(int r, uint64_t round) const;

  // Rounds are taken in order; begin_op reserves the next n.
  uint64_t reserve_rounds(uint64_t n) {
    uint64_t first = next_round_;
    next_round_ += n;
    return first;
  }

  void wait_reusable(uint64_t round, Waiter &w);  // step 1
  void post(uint64_t round);                      // step 2
  void wait_posted(uint64_t round, Waiter &w);
  void wait_posted_by(int r, uint64_t round, Waiter &w);
  void post_reduced(uint64_t round);              // step 3
  void wait_reduced(uint64_t round, Waiter &w);
  void wait_reduced_by(int r, uint64_t round, Waiter &w);
  void post_consumed(uint64_t round);             // step 4

  // Abort, told through shared memory: every member sees it at once.
  void mark_aborted();
  // The lowest member that aborted, or -1.
  int aborted_by() const;

  // Sleep on this member's doorbell (woken by any peer's post).
  void sleep(int64_t timeout_us);
  void wake_self();
  // Which members have not yet posted / reduced `round` (for messages).
  std::vector<int> not_posted(uint64_t round) const;

  static constexpr size_t kHeaderBytes = 4096;

 private:
  struct Header;
  Arena() = default;
  Header &header(int r) const { return *reinterpret_cast<Header *>(bases_[r]); }
  void wake_sleepers();
  void wait_counter(int which, uint64_t value, Waiter &w, int only = -1);

  int size_ = 0, rank_ = 0;
  size_t chunk_ = 0;
  uint64_t next_round_ = 0;
  std::vector<uint8_t *> bases_;
  std::vector<void *> segments_;
  Transport *transport_ = nullptr;
};

}  // namespace smd
