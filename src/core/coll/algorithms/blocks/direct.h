// The frame every direct (shared-memory arena) algorithm runs in: it
// reserves the operation's rounds, publishes and checks the operation's
// descriptor in the first round (ranks that disagree on the arguments all
// fail with SMD_ERR_MISMATCH), and drives the round protocol of Arena.
#pragma once

#include <vector>

#include "core/coll/coll_util.h"
#include "core/coll/collective.h"
#include "core/comm/arena.h"
#include "core/comm/communicator.h"

namespace smd {

class DirectOp {
 public:
  // `stage_bytes`: the most any member stages in one round; up to
  // Arena::kSmallBytes the operation uses the small buffers, which let
  // members run further ahead of each other, and a one-round operation up
  // to OpDesc::kInlineBytes stages into its descriptor.
  DirectOp(Comm &comm, const CollArgs &args, uint64_t rounds, size_t stage_bytes, const char *what);

  Arena &arena() { return arena_; }
  Waiter &waiter() { return waiter_; }
  uint64_t round(uint64_t k) const { return first_ + k; }

  // Round k, step 1: wait until my staging buffer may be rewritten; returns it.
  uint8_t *begin(uint64_t k);
  // Step 2: post round k and wait for every member's post. With `from`
  // (a broadcast's root), the others wait only for its post and the root
  // for nobody. Round 0 checks the descriptors: against every member's, or
  // against the root's; the root checks its own later (verify_earlier).
  void post_and_wait(uint64_t k, int from = -1);
  // Step 3 helpers for algorithms that reduce into staging.
  void post_reduced(uint64_t k) { arena_.post_reduced(round(k)); }
  void wait_reduced(uint64_t k, int from = -1);
  // Step 4.
  void finish(uint64_t k) { arena_.post_consumed(round(k)); }

  // Member j's staging buffer of round k.
  uint8_t *buf(int j, uint64_t k) const {
    if (inline_) return arena_.desc(j, round(k)).payload;
    return small_ ? arena_.small_buf(j, round(k)) : arena_.buf(j, round(k));
  }
  // Round k of a pipelined reduction (allreduce, reduce) over the elements
  // rk of the arguments: stage the slices the others reduce (nothing when
  // this member's input is offered in place), post and wait, reduce this
  // rank's slice (its own input read from sendbuf, peers' where they lie
  // or as staged) into the hole it left in its staging buffer, post
  // `reduced`. Returns that slice.
  Range reduce_my_slice(uint64_t k, Range rk, const Reduction &red);
  // Inputs read in place. Before round 0, on every member: the operation
  // reads peers' inputs where they lie when they are in memory from
  // smd_mem_alloc, and offers this member's `mine` (may be null) the same
  // way if it is and the operation is not small. Returns whether `mine` is
  // offered: then the caller stages nothing of it and must not return
  // before every peer read it (end_in_place(), or a wait that implies it).
  bool use_in_place(const void *mine, size_t bytes);
  // From round 0's post_and_wait on: member j's input of round k, where it
  // lies (`in_place_offset` bytes into the operation's input) or as staged
  // (`staged_offset` bytes into its staging buffer of round k).
  const uint8_t *input(int j, uint64_t k, size_t in_place_offset, size_t staged_offset = 0) const {
    const uint8_t *where = resolved_ ? arena_.in_place()[static_cast<size_t>(j)] : nullptr;
    return where ? where + in_place_offset : buf(j, k) + staged_offset;
  }
  // Cross-memory reads (the cma algorithms). Before round 0, on every
  // member: the operation posts where this member's `mine` lies (may be
  // null) for peers to copy from with cross_memory_copy(), or to map when
  // it is memory from smd_mem_alloc; the descriptor carries it whatever
  // the size. Returns whether `mine` is offered: then the caller must not
  // return before every peer read it (end_in_place()).
  bool use_cross_memory(const void *mine, size_t bytes);
  // From round 0's post_and_wait on: copies `bytes` of member j's offered
  // input, from `offset` on, into `to`. Throws SMD_ERR_PEER_FAILURE
  // naming j if it exits or unmaps the input meanwhile.
  void read_input(int j, void *to, size_t offset, size_t bytes);
  // Waits until every member consumed the last round (read the input).
  void end_in_place();

  // Every member's input of round k as input() finds it, with `own`
  // standing for this rank's (read where it lies, in its own cache).
  const void *const *sources(uint64_t k, size_t in_place_offset, size_t staged_offset,
                             const void *own);

 private:
  // Fails with SMD_ERR_MISMATCH unless `mine` (of round r) agrees with the
  // descriptor of every member (or only `only`) that still holds round r.
  void check_agreement(uint64_t r, const OpDesc &mine, int only, bool earlier);
  // Checks the deferred descriptors of rounds before `posted_by_all`.
  void verify_earlier(uint64_t posted_by_all);
  Comm &comm_;
  const CollArgs &args_;
  Arena &arena_;
  Waiter waiter_;
  // Resolves the members' in-place offers of round 0 into arena_.in_place().
  void resolve_in_place(int only);
  uint64_t first_;
  uint64_t rounds_;
  bool small_;
  bool in_place_ = false;  // use_in_place() was called: offers are exchanged
  bool offered_ = false;
  bool resolved_ = false;  // arena_.in_place() holds this operation's offers
  uint64_t offered_id_ = 0, offered_offset_ = 0, offered_address_ = 0;
  bool inline_;  // one round staging at most OpDesc::kInlineBytes
};

// The descriptor protocol, shared with the tiny path (tiny.cc).
// The descriptor of a call that starts at `round`.
OpDesc desc_of(const CollArgs &a, uint64_t round);
// Writes d's fields into a member's descriptor slot (`round` first, so a
// reader of an earlier round in that slot sees the rewrite); not `ready`
// nor the payload.
void publish_desc(OpDesc &slot, const OpDesc &d);
// Whether a peer's descriptor of the round `mine` describes equals it
// (inline: the common case of every tiny call).
inline bool desc_matches(const OpDesc &slot, const OpDesc &mine) {
  return __atomic_load_n(&slot.round, __ATOMIC_RELAXED) == mine.round &&
         __atomic_load_n(&slot.kind, __ATOMIC_RELAXED) == mine.kind &&
         __atomic_load_n(&slot.datatype, __ATOMIC_RELAXED) == mine.datatype &&
         __atomic_load_n(&slot.op, __ATOMIC_RELAXED) == mine.op &&
         __atomic_load_n(&slot.root, __ATOMIC_RELAXED) == mine.root &&
         __atomic_load_n(&slot.count, __ATOMIC_RELAXED) == mine.count;
}
// Whether the descriptor of every member (or only `only`) holding round r
// equals `mine`: the allocation-free common case of check_round_agreement.
bool round_agrees(const Arena &arena, uint64_t r, const OpDesc &mine, int only, bool earlier);
// Fails with SMD_ERR_MISMATCH (naming every member's call) unless `mine`
// agrees with the descriptor of every member (or only `only`) that still
// holds round r. `running`: the collective being called now; `earlier`:
// r belongs to an earlier call whose check was deferred.
void check_round_agreement(Comm &c, CollKind running, uint64_t r, const OpDesc &mine, int only,
                           bool earlier);
// Checks the deferred descriptors (Arena::unverified) of rounds before
// `posted_by_all`.
void verify_earlier_rounds(Comm &c, CollKind running, uint64_t posted_by_all);
// For a call that waits for every member, before it posts its own round:
// the rounds this member ran as a broadcast root and has not checked yet,
// once every member posted them. Two members that each thought they were
// the root then fail before anyone can complete this call, and the others,
// waiting for their post, learn of it (the announced mismatch).
void verify_before_posting(Comm &c, CollKind running, Waiter &w);
// SMD_ERR_ABORTED if a member aborted the communicator (through its arena).
void fail_if_aborted(Comm &c, const char *what);
// Tells w's timeout message which members have not posted the last round.
void describe_pending(Comm &c, Waiter &w);

// Messages up to this size take the one-round path: every member reduces
// all inputs itself (latency-bound sizes).
size_t direct_eager_limit(int nranks, size_t chunk);
// The one round of allreduce and reduce up to that size, the same protocol
// for both: every member offers `offer` (its sendbuf, or nullptr when it may
// not be read in place) or stages its input, and `into` (nullptr on a member
// that keeps no result) gets all members' inputs reduced by `red`.
void direct_eager_reduce(Comm &c, const CollArgs &a, const Reduction &red, const void *offer,
                         void *into, const char *what);

}  // namespace smd
