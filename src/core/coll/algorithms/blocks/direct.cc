#include "core/coll/algorithms/blocks/direct.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "core/coll/algorithms/blocks/stream_copy.h"
#include "core/comm/cross_memory.h"
#include "core/comm/shared_memory.h"
#include "core/reduce/reduce.h"
#include "core/util/dtype.h"
#include "core/util/error.h"

namespace smd {

namespace {

OpDesc read_desc(const OpDesc &slot) {
  OpDesc d;
  d.round = __atomic_load_n(&slot.round, __ATOMIC_ACQUIRE);
  d.kind = __atomic_load_n(&slot.kind, __ATOMIC_RELAXED);
  d.datatype = __atomic_load_n(&slot.datatype, __ATOMIC_RELAXED);
  d.op = __atomic_load_n(&slot.op, __ATOMIC_RELAXED);
  d.has_subject = __atomic_load_n(&slot.has_subject, __ATOMIC_RELAXED);
  d.root = __atomic_load_n(&slot.root, __ATOMIC_RELAXED);
  d.count = __atomic_load_n(&slot.count, __ATOMIC_RELAXED);
  return d;
}

// False when the slot holds (or is being rewritten for) another round.
bool read_desc_of_round(const OpDesc &slot, uint64_t round, OpDesc *out) {
  *out = read_desc(slot);
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  return out->round == round && __atomic_load_n(&slot.round, __ATOMIC_RELAXED) == round;
}

// What a descriptor of an operation that is not inline carries in its
// payload: where the member's input lies, when peers read it in place
// (memory from smd_mem_alloc) or by cross-memory reads (any memory).
struct InPlaceRef {
  uint64_t id;  // shared block (0: staged)
  uint64_t offset;
  uint64_t address;  // in the member's own address space (0: not offered)
};
static_assert(sizeof(InPlaceRef) <= OpDesc::kInlineBytes);

bool same_desc(const OpDesc &a, const OpDesc &b) {
  return a.round == b.round && a.kind == b.kind && a.datatype == b.datatype && a.op == b.op &&
         a.root == b.root && a.count == b.count;
}

}  // namespace

// Descriptors live in shared memory and a slot's is rewritten when the slot
// is reused, while a broadcast root may still check the old one
// (verify_earlier_rounds). `round` acts as a sequence number: written
// first, then a release fence, then the fields; a reader copies the fields
// between two reads of `round` and trusts the copy only if both saw its round.
void publish_desc(OpDesc &slot, const OpDesc &d) {
  __atomic_store_n(&slot.round, d.round, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  __atomic_store_n(&slot.kind, d.kind, __ATOMIC_RELAXED);
  __atomic_store_n(&slot.datatype, d.datatype, __ATOMIC_RELAXED);
  __atomic_store_n(&slot.op, d.op, __ATOMIC_RELAXED);
  __atomic_store_n(&slot.has_subject, d.has_subject, __ATOMIC_RELAXED);
  __atomic_store_n(&slot.root, d.root, __ATOMIC_RELAXED);
  __atomic_store_n(&slot.count, d.count, __ATOMIC_RELAXED);
}

OpDesc desc_of(const CollArgs &a, uint64_t round) {
  OpDesc d;
  d.round = round;
  d.kind = static_cast<uint8_t>(a.kind);
  d.datatype = static_cast<uint8_t>(a.datatype);
  d.op = static_cast<uint8_t>(a.op);
  // The subject (a group's digest, sharded parameters) rides in the root
  // field, which every descriptor check compares: 0 for a plain call, so
  // plain calls' descriptors are unchanged.
  d.root = a.root ^ static_cast<int32_t>(a.subject);
  d.has_subject = a.subject != 0;
  d.count = a.count;
  return d;
}

void fail_if_aborted(Comm &c, const char *what) {
  if (!c.arena()->any_aborted()) return;
  int by = c.arena()->aborted_by();
  if (by >= 0) {
    smd_result_t code = c.end_code();
    fail(code, "%s on %s: rank %d %s the communicator", what, c.where().c_str(), by,
         code == SMD_ERR_REVOKED ? "revoked" : "aborted");
  }
}

void describe_pending(Comm &c, Waiter &w) {
  Comm *comm = &c;
  w.set_pending([comm] {
    // The others only (this rank may itself be short of the last step,
    // waiting for them), with world ranks where the communicator's numbers
    // differ (a node's sub-communicator).
    Arena &arena = *comm->arena();
    std::string s;
    for (int r : arena.not_posted(arena.reserve_rounds(0) - 1)) {
      if (r == comm->rank()) continue;
      s += ' ';
      s += std::to_string(r);
      if (comm->world_rank(r) != r)
        s += " (world rank " + std::to_string(comm->world_rank(r)) + ")";
    }
    return s.empty() ? std::string() : "ranks that have not reached the last step:" + s;
  });
}

size_t direct_eager_limit(int nranks, size_t chunk) {
  // Each member reads nranks inputs: keep that in the first-level caches.
  size_t limit = (64 * 1024) / static_cast<size_t>(nranks > 2 ? nranks / 2 : 1);
  return limit < chunk ? limit : chunk;
}

void direct_eager_reduce(Comm &c, const CollArgs &a, const Reduction &red, const void *offer,
                         void *into, const char *what) {
  size_t bytes = a.count * datatype_size(a.datatype);
  DirectOp d(c, a, 1, bytes, what);
  // Every member takes part in the exchange of offers, offering or not.
  bool offered = d.use_in_place(offer, bytes);
  uint8_t *stage = d.begin(0);
  if (!offered) stage_copy(stage, a.sendbuf, bytes, bytes);
  d.post_and_wait(0);
  if (into)
    reduce::reduce(into, d.sources(0, 0, 0, a.sendbuf), c.size(), a.count, a.datatype, red.op,
                   red.divisor);
  d.finish(0);
  d.end_in_place();
}

DirectOp::DirectOp(Comm &comm, const CollArgs &args, uint64_t rounds, size_t stage_bytes,
                   const char *what)
    : comm_(comm),
      args_(args),
      arena_(*comm.arena()),
      waiter_(comm, what, SleepOn::kArena),
      first_(arena_.reserve_rounds(rounds)),
      rounds_(rounds),
      small_(stage_bytes <= Arena::kSmallBytes),
      inline_(rounds == 1 && stage_bytes <= OpDesc::kInlineBytes) {
  fail_if_aborted(comm, what);
  describe_pending(comm, waiter_);
}

uint8_t *DirectOp::begin(uint64_t k) {
  uint64_t r = round(k);
  arena_.wait_reusable(r, small_, waiter_);
  // Everyone consumed, so posted, every round up to r - reach.
  uint64_t ahead = Arena::reach(small_);
  if (r >= ahead) verify_earlier(r - ahead + 1);
  return buf(arena_.rank(), k);
}

void DirectOp::post_and_wait(uint64_t k, int from) {
  uint64_t r = round(k);
  int me = arena_.rank();
  if (k == 0) {
    if (from < 0) verify_before_posting(comm_, args_.kind, waiter_);
    publish_desc(arena_.desc(me, r), desc_of(args_, r));
    if (inline_) {
      arena_.post_ready(r);
    } else if (in_place_) {
      InPlaceRef ref{offered_ ? offered_id_ : 0, offered_offset_, offered_address_};
      memcpy(arena_.desc(me, r).payload, &ref, sizeof ref);
    }
  }
  // Only the root's post is awaited in a rooted round (a member that ran
  // other arguments and sleeps on this one is woken by finish()).
  arena_.post(r, from < 0 || from == me);
  if (from < 0) {
    if (inline_) arena_.wait_ready(r, waiter_);
    else arena_.wait_posted(r, waiter_);
    if (k == 0) {
      verify_earlier(r);
      check_agreement(r, arena_.desc(me, r), -1, false);
      if (in_place_) resolve_in_place(-1);
    }
  } else if (from != me) {
    if (inline_) arena_.wait_ready(r, waiter_, from);
    else arena_.wait_posted_by(from, r, waiter_);
    if (k == 0) {
      check_agreement(r, arena_.desc(me, r), from, false);
      if (in_place_) resolve_in_place(from);
    }
  } else if (k == 0) {
    arena_.unverified().push(arena_.desc(me, r));
  }
}

bool DirectOp::use_in_place(const void *mine, size_t bytes) {
  // Small operations stage: a copy of at most 1 KiB costs less than the
  // lookup, and an offering member must wait for its readers at the end.
  if (small_ || inline_) return false;
  in_place_ = true;
  SharedRef ref;
  if (!mine || bytes == 0 || !shared_find(comm_.ctx(), mine, bytes, &ref) ||
      !arena_.publish_shared(ref.id, *ref.handle))
    return false;
  offered_ = true;
  offered_id_ = ref.id;
  offered_offset_ = ref.offset;
  return true;
}

bool DirectOp::use_cross_memory(const void *mine, size_t bytes) {
  // Posted in the descriptor whatever the size: never inline.
  inline_ = false;
  in_place_ = true;
  if (!mine || bytes == 0) return false;
  offered_ = true;
  offered_address_ = reinterpret_cast<uintptr_t>(mine);
  // Memory from smd_mem_alloc is mapped by peers instead (a plain copy).
  SharedRef ref;
  if (shared_find(comm_.ctx(), mine, bytes, &ref) && arena_.publish_shared(ref.id, *ref.handle)) {
    offered_id_ = ref.id;
    offered_offset_ = ref.offset;
  }
  return true;
}

void DirectOp::read_input(int j, void *to, size_t offset, size_t bytes) {
  if (bytes == 0) return;
  size_t i = static_cast<size_t>(j);
  if (const uint8_t *where = arena_.in_place()[i]) {
    copy_out(to, where + offset, bytes, bytes);
    return;
  }
  uint64_t remote = arena_.remote()[i];
  if (!remote)
    fail(SMD_ERR_INTERNAL, "%s on %s: rank %d offered no input to read", coll_name(args_.kind),
         comm_.where().c_str(), j);
  std::string peer = "rank " + std::to_string(j);
  if (comm_.world_rank(j) != j) peer += " (world rank " + std::to_string(comm_.world_rank(j)) + ")";
  cross_memory_copy(arena_.pid(j), remote + offset, to, bytes, coll_name(args_.kind), peer);
}

void DirectOp::resolve_in_place(int only) {
  std::vector<const uint8_t *> &where = arena_.in_place();
  std::vector<uint64_t> &remote = arena_.remote();
  for (int j = 0; j < arena_.size(); ++j) {
    where[static_cast<size_t>(j)] = nullptr;
    remote[static_cast<size_t>(j)] = 0;
    if (j == arena_.rank() || (only >= 0 && j != only)) continue;
    InPlaceRef ref;
    memcpy(&ref, arena_.desc(j, round(0)).payload, sizeof ref);
    if (ref.id) where[static_cast<size_t>(j)] = arena_.peer_shared(comm_, j, ref.id) + ref.offset;
    remote[static_cast<size_t>(j)] = ref.address;
  }
  resolved_ = true;
}

void DirectOp::end_in_place() {
  if (offered_) arena_.wait_consumed(round(rounds_ - 1), waiter_);
}

void DirectOp::verify_earlier(uint64_t posted_by_all) {
  verify_earlier_rounds(comm_, args_.kind, posted_by_all);
}

void verify_earlier_rounds(Comm &c, CollKind running, uint64_t posted_by_all) {
  auto &pending = c.arena()->unverified();
  while (!pending.empty() && pending.front().round < posted_by_all) {
    OpDesc mine = pending.front();
    pending.pop();
    check_round_agreement(c, running, mine.round, mine, -1, true);
  }
}

void verify_before_posting(Comm &c, CollKind running, Waiter &w) {
  Arena &a = *c.arena();
  if (a.unverified().empty()) return;
  uint64_t last = a.unverified().back().round;
  a.wait_posted(last, w);
  verify_earlier_rounds(c, running, last + 1);
}

void DirectOp::wait_reduced(uint64_t k, int from) {
  if (from < 0) arena_.wait_reduced(round(k), waiter_);
  else arena_.wait_reduced_by(from, round(k), waiter_);
}

Range DirectOp::reduce_my_slice(uint64_t k, Range rk, const Reduction &red) {
  int p = arena_.size(), me = arena_.rank();
  size_t es = datatype_size(args_.datatype);
  Range mine = split_aligned(rk.len, p, me, line_elems(es));
  uint8_t *stage = begin(k);
  if (!offered_)
    stage_except(stage, at(args_.sendbuf, rk.off, es), rk.len * es, mine.off * es, mine.len * es);
  post_and_wait(k);
  reduce::reduce(
      buf(me, k) + mine.off * es,
      sources(k, (rk.off + mine.off) * es, mine.off * es, at(args_.sendbuf, rk.off + mine.off, es)),
      p, mine.len, args_.datatype, red.op, red.divisor);
  post_reduced(k);
  return mine;
}

const void *const *DirectOp::sources(uint64_t k, size_t in_place_offset, size_t staged_offset,
                                     const void *own) {
  std::vector<const void *> &srcs = arena_.sources();
  for (int j = 0; j < arena_.size(); ++j) srcs[j] = input(j, k, in_place_offset, staged_offset);
  srcs[arena_.rank()] = own;
  return srcs.data();
}

void DirectOp::check_agreement(uint64_t r, const OpDesc &mine, int only, bool earlier) {
  check_round_agreement(comm_, args_.kind, r, mine, only, earlier);
}

bool round_agrees(const Arena &arena, uint64_t r, const OpDesc &mine, int only, bool earlier) {
  for (int j = 0; j < arena.size(); ++j) {
    if (j == arena.rank() || (only >= 0 && j != only)) continue;
    OpDesc d;
    if (earlier) {
      if (!read_desc_of_round(arena.desc(j, r), r, &d)) continue;
    } else {
      d = read_desc(arena.desc(j, r));
    }
    if (!same_desc(d, mine)) return false;
  }
  return true;
}

void check_round_agreement(Comm &comm, CollKind running, uint64_t r, const OpDesc &mine, int only,
                           bool earlier) {
  const Arena &arena = *comm.arena();
  if (round_agrees(arena, r, mine, only, earlier)) return;
  // One consistent copy of every member's descriptor taken first, so the
  // verdict and the message see the same thing. A member whose slot moved
  // past r (possible only for a deferred check: it is rewriting that slot
  // now) had compared itself with the root and agreed: it is left out.
  int n = arena.size();
  std::vector<OpDesc> seen(static_cast<size_t>(n));
  std::vector<bool> skip(static_cast<size_t>(n), false);
  for (int j = 0; j < n; ++j) {
    size_t i = static_cast<size_t>(j);
    if (j == arena.rank()) seen[i] = mine;
    else if (only >= 0 && j != only) skip[i] = true;
    else if (earlier) skip[i] = !read_desc_of_round(arena.desc(j, r), r, &seen[i]);
    else seen[i] = read_desc(arena.desc(j, r));
  }
  bool differ = false;
  for (int j = 0; j < n && !differ; ++j) {
    if (skip[static_cast<size_t>(j)]) continue;
    const OpDesc &d = seen[static_cast<size_t>(j)];
    differ = !same_desc(d, mine);
  }
  if (!differ) return;
  std::string s;
  for (int j = 0; j < n; ++j) {
    if (skip[static_cast<size_t>(j)]) continue;
    const OpDesc &d = seen[static_cast<size_t>(j)];
    if (d.round != mine.round) {
      s += format("; rank %d: out of step (a different number of collectives were called)", j);
      continue;
    }
    s += format("; rank %d: %s count=%llu %s", j, coll_name(static_cast<CollKind>(d.kind)),
                static_cast<unsigned long long>(d.count),
                datatype_name(static_cast<smd_datatype_t>(d.datatype)));
    CollKind kind = static_cast<CollKind>(d.kind);
    if (kind == CollKind::kAllreduce || kind == CollKind::kReduce ||
        kind == CollKind::kReduceScatter)
      s += format(" op=%s", op_name(static_cast<smd_op_t>(d.op)));
    if (d.has_subject)
      s += format(" for a subject (a group's calls or sharded parameters; root^subject %08x)",
                  static_cast<uint32_t>(d.root));
    else if (kind == CollKind::kBroadcast || kind == CollKind::kReduce)
      s += format(" root=%d", d.root);
  }
  if (earlier)
    fail(SMD_ERR_MISMATCH, "%s on %s: an earlier %s was called with different arguments%s",
         coll_name(running), comm.where().c_str(), coll_name(static_cast<CollKind>(mine.kind)),
         s.c_str());
  fail(SMD_ERR_MISMATCH, "%s on %s: ranks called it with different arguments%s", coll_name(running),
       comm.where().c_str(), s.c_str());
}

}  // namespace smd
