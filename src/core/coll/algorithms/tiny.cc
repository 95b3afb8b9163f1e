#include "core/coll/algorithms/tiny.h"

#include <cstring>
#include <optional>

#include "core/coll/coll_util.h"
#include "core/coll/algorithms/blocks/direct.h"
#include "core/comm/communicator.h"
#include "core/reduce/reduce.h"

namespace smd {

namespace {

// The wait of this call, made only when a peer is not there yet: most
// tiny calls find every line they need already written.
class LazyWaiter {
 public:
  LazyWaiter(Comm &c, const char *what) : c_(c), what_(what) {}
  Waiter &get() {
    if (!w_) {
      w_.emplace(c_, what_, SleepOn::kArena);
      describe_pending(c_, *w_);
    }
    return *w_;
  }

 private:
  Comm &c_;
  const char *what_;
  std::optional<Waiter> w_;
};

// Copies that the compiler sees as one or two moves for the common sizes
// (an empty call may pass null buffers: nothing is copied).
inline void copy_small(void *dst, const void *src, size_t bytes) {
  if (bytes == 0) return;
  if (bytes == 8) memcpy(dst, src, 8);
  else if (bytes == 4) memcpy(dst, src, 4);
  else memcpy(dst, src, bytes);
}

}  // namespace

void run_tiny(Comm &c, const CollArgs &a) {
  Arena &arena = *c.arena();
  const int p = arena.size(), me = arena.rank();
  const char *what = coll_name(a.kind);
  const bool rooted = a.kind == CollKind::kBroadcast;
  const int from = rooted ? a.root : -1;
  const size_t es = datatype_size(a.datatype), bytes = a.count * es;
  // What a member publishes: its part, or a reduce_scatter's every block.
  const size_t published =
      a.kind == CollKind::kReduceScatter ? bytes * static_cast<size_t>(p) : bytes;
  const uint64_t r = arena.reserve_rounds(1);
  fail_if_aborted(c, what);
  LazyWaiter waiter(c, what);

  // Step 1: the line of round r may be rewritten once every member
  // consumed the round that used it last.
  if (!arena.small_reusable_known(r)) arena.wait_reusable(r, true, waiter.get());
  // A root's unchecked rounds are checked when the oldest one's slot comes
  // round again, then all those every member consumed: one batch of lines
  // read together (their misses overlap) instead of one miss per call.
  if (r >= Arena::kRounds && !arena.unverified().empty() &&
      arena.unverified().front().round < r - Arena::kRounds + 1)
    verify_earlier_rounds(c, a.kind, arena.consumed_by_all_seen());

  if (!rooted && !arena.unverified().empty()) verify_before_posting(c, a.kind, waiter.get());

  // Step 2: one line: descriptor, data, then `ready`.
  OpDesc mine = desc_of(a, r);
  OpDesc &line = arena.desc(me, r);
  publish_desc(line, mine);
  const bool sends = !rooted || me == a.root;
  if (sends) copy_small(line.payload, a.sendbuf, published);
  arena.post_ready(r);
  // The counter too: a member that runs other arguments, or an algorithm
  // that is not tiny, waits there. Only waited-for members ring.
  arena.post(r, sends);

  if (rooted && me == a.root) {
    // Nobody is waited for: the receivers' descriptors are checked when
    // this slot comes round again (or at the next call that waits for all).
    arena.unverified().push(mine);
    if (a.recvbuf != a.sendbuf) copy_small(a.recvbuf, a.sendbuf, bytes);
    arena.post_consumed(r);
    return;
  }

  if (!arena.ready_now(r, from)) arena.wait_ready(r, waiter.get(), from);
  bool agree = true;
  for (int j = 0; j < p; ++j)
    if (j != me && (from < 0 || j == from)) agree = agree && desc_matches(arena.desc(j, r), mine);
  if (!agree) check_round_agreement(c, a.kind, r, mine, from, false);

  // Step 3: every input is a line in this member's cache now.
  switch (a.kind) {
    case CollKind::kBarrier: break;
    case CollKind::kBroadcast: copy_small(a.recvbuf, arena.desc(a.root, r).payload, bytes); break;
    case CollKind::kAllgather:
      for (int j = 0; j < p; ++j)
        copy_small(at(a.recvbuf, static_cast<size_t>(j) * a.count, es), arena.desc(j, r).payload,
                   bytes);
      break;
    default: {
      // Every member combines the inputs in rank order: the same bits
      // everywhere. A reduce_scatter reduces its own block of each line.
      const size_t block = a.kind == CollKind::kReduceScatter ? static_cast<size_t>(me) * bytes : 0;
      std::vector<const void *> &srcs = arena.sources();
      for (int j = 0; j < p; ++j) srcs[static_cast<size_t>(j)] = arena.desc(j, r).payload + block;
      Reduction red = reduction_of(a.op, p);
      reduce::reduce(a.recvbuf, srcs.data(), p, a.count, a.datatype, red.op, red.divisor);
      break;
    }
  }
  // Step 4.
  arena.post_consumed(r);
}

}  // namespace smd
