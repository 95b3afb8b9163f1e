#include "core/comm/arena.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>

#include "core/comm/communicator.h"
#include "core/comm/cross_memory.h"
#include "core/exec/futex.h"
#include "core/util/error.h"
#include "core/util/log.h"
#include "core/util/params.h"

namespace smd {

namespace {
// Staging per member and round: large enough to stream at memory speed,
// small enough that all members' slots stay in the last-level cache.
constexpr size_t kDefaultChunk = 256 * 1024;

struct alignas(64) Counter {
  std::atomic<uint64_t> value{0};
};
enum Which { kPosted = 0, kReduced = 1, kConsumed = 2 };

// What a member tells the others at setup, after its segment's handle, so
// that they can try a cross-memory read of it: its pid and where a word
// of known value lies in its own address space.
struct CrossMemoryProbe {
  uint64_t pid, address, value;
};
// What each member found: 0, or the errno of its read from `peer` (-1:
// switched off by SMD_CMA; EIO: another process answered at that pid).
struct CrossMemoryVerdict {
  int32_t err, peer;
};

// Reads every peer's probe word (the first failure is reported).
CrossMemoryVerdict probe_peers(const std::vector<CrossMemoryProbe> &probes, int me) {
  if (!param_bool("SMD_CMA")) return {-1, me};
  for (size_t r = 0; r < probes.size(); ++r) {
    if (int(r) == me) continue;
    uint64_t got = 0;
    int err =
        cross_memory_read(static_cast<pid_t>(probes[r].pid), probes[r].address, &got, sizeof got);
    if (err == 0 && got != probes[r].value) err = EIO;
    if (err != 0) return {err, int32_t(r)};
  }
  return {0, -1};
}

Bytes as_bytes(const void *p, size_t n) {
  const uint8_t *b = static_cast<const uint8_t *>(p);
  return Bytes(b, b + n);
}
}  // namespace

struct Arena::Header {
  Counter counters[3];
  // The doorbell line, written only while this member waits long: then
  // `drowsy` (waiters past spinning, counted) and `asleep` (in futex_wait).
  // Posts read `drowsy` alone and ring only when it is set.
  alignas(64) std::atomic<uint32_t> bell{0};
  std::atomic<uint32_t> drowsy{0};
  std::atomic<uint32_t> asleep{0};
  // Read by every member at the start of every operation: on a line of its
  // own, which nothing writes until an abort, it stays in every cache
  // (next to the doorbell it missed whenever a peer rang or slept).
  alignas(64) std::atomic<uint32_t> aborted{0};
  alignas(64) OpDesc desc[Arena::kRounds];
  // The block of smd_mem_alloc memory this member's current operation
  // offers for reading in place (written before that operation posts).
  alignas(64) struct {
    uint64_t id;
    uint32_t handle_size;
    uint8_t handle[116];
  } shared;
};
static_assert(sizeof(OpDesc) == 64);

std::unique_ptr<Arena> Arena::create(Comm &comm, Transport &transport) {
  static_assert(sizeof(Header) <= kHeaderBytes);
  static_assert(offsetof(Header, desc) == kDescOffset);
  std::unique_ptr<Arena> a(new Arena());
  a->size_ = comm.size();
  a->rank_ = comm.rank();
  a->chunk_ = kDefaultChunk;
  a->transport_ = &transport;
  a->bases_.assign(a->size_, nullptr);
  a->segments_.assign(a->size_, nullptr);
  a->sources_.assign(a->size_, nullptr);
  a->seen_.assign(static_cast<size_t>(a->size_) * 3, 0);
  a->in_place_.assign(a->size_, nullptr);
  a->remote_.assign(a->size_, 0);
  a->peer_blocks_.resize(a->size_);

  size_t bytes = kHeaderBytes + kRounds * kSmallBytes + kSlots * a->chunk_;
  void *mine = nullptr;
  Bytes handle;
  a->segments_[a->rank_] = transport.segment_create(bytes, &mine, &handle);
  a->bases_[a->rank_] = static_cast<uint8_t *>(mine);
  new (mine) Header();

  // Lives until every member has tried to read it (the second exchange).
  volatile uint64_t probe_word =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
      (uint64_t(getpid()) << 32) ^ 0x736d64636d61ull;
  CrossMemoryProbe probe{uint64_t(getpid()), reinterpret_cast<uintptr_t>(&probe_word), probe_word};
  Bytes blob = handle, probe_bytes = as_bytes(&probe, sizeof probe);
  blob.insert(blob.end(), probe_bytes.begin(), probe_bytes.end());
  std::vector<Bytes> handles = comm.exchange(blob, TagKind::kSetup, comm.id(), 1);
  std::vector<CrossMemoryProbe> probes(a->size_);
  for (int r = 0; r < a->size_; ++r) {
    Bytes &h = handles[r];
    if (h.size() < sizeof(CrossMemoryProbe))
      fail(SMD_ERR_TRANSPORT, "arena setup: rank %d sent %zu bytes", r, h.size());
    memcpy(&probes[r], h.data() + h.size() - sizeof(CrossMemoryProbe), sizeof(CrossMemoryProbe));
    h.resize(h.size() - sizeof(CrossMemoryProbe));
    a->pids_.push_back(static_cast<pid_t>(probes[r].pid));
  }
  for (int r = 0; r < a->size_; ++r) {
    if (r == a->rank_) continue;
    void *ptr = nullptr;
    size_t got = 0;
    a->segments_[r] =
        transport.segment_attach(comm.ctx().endpoint(comm.world_rank(r)), handles[r], &ptr, &got);
    if (got < bytes)
      fail(SMD_ERR_TRANSPORT, "arena segment of rank %d has %zu bytes, expected %zu", r, got,
           bytes);
    a->bases_[r] = static_cast<uint8_t *>(ptr);
  }
  for (int r = 0; r < a->size_; ++r) a->abort_flags_.push_back(&a->header(r).aborted);
  // Nobody may release its segment before every member has mapped it, nor
  // leave this function (probe_word) before every member has read it.
  CrossMemoryVerdict mine_verdict = probe_peers(probes, a->rank_);
  std::vector<Bytes> verdicts =
      comm.exchange(as_bytes(&mine_verdict, sizeof mine_verdict), TagKind::kSetup, comm.id(), 2);
  a->cross_memory_ = true;
  for (int r = 0; r < a->size_ && a->cross_memory_; ++r) {
    CrossMemoryVerdict v{0, -1};
    if (verdicts[r].size() == sizeof v) memcpy(&v, verdicts[r].data(), sizeof v);
    else v.err = EIO;
    if (v.err == 0) continue;
    a->cross_memory_ = false;
    a->cross_memory_why_ =
        v.err < 0 ? format("SMD_CMA=0 on rank %d", r)
                  : format("rank %d cannot read rank %d's memory: %s", r, v.peer,
                           v.err == EIO ? "another process answered at its pid (a different pid "
                                          "namespace)"
                                        : cross_memory_denied(v.err).c_str());
  }
  SMD_INFO("comm", "%s: cross-memory attach %s%s", comm.where().c_str(),
           a->cross_memory_ ? "works between all members (the cma algorithms apply)"
                            : "unavailable, so no cma algorithm runs: ",
           a->cross_memory_why_.c_str());
  SMD_TRACE("comm", "%s: shared-memory arena of %d members, %zu KiB staging per round",
            comm.where().c_str(), a->size_, a->chunk_ / 1024);
  return a;
}

Arena::~Arena() {
  for (auto &blocks : peer_blocks_)
    for (PeerBlock &b : blocks) transport_->segment_release(b.segment);
  for (int r = 0; r < size_; ++r)
    if (segments_[r]) transport_->segment_release(segments_[r]);
}

void Arena::wake_sleepers() {
  // No fence while nobody is drowsy: a waiter marks itself drowsy long
  // before it first sleeps (Waiter::pause), so a post that misses a flag
  // set this instant cannot meet a sleeper. Ringing is an atomic
  // read-modify-write, ordered after the post's store; a sleeper sets
  // `asleep`, fences and sleeps only while the bell is what it read before
  // it last looked at the condition (Dekker's pattern with the bell): a
  // ring it did not see either shows in the bell or finds it asleep.
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    Header &h = header(r);
    if (h.drowsy.load(std::memory_order_relaxed) == 0) continue;
    h.bell.fetch_add(1, std::memory_order_seq_cst);
    if (h.asleep.load(std::memory_order_seq_cst)) futex_wake_all(&h.bell);
  }
}

void Arena::set_drowsy(bool on) {
  Header &h = header(rank_);
  if (on) h.drowsy.fetch_add(1, std::memory_order_seq_cst);
  else h.drowsy.fetch_sub(1, std::memory_order_seq_cst);
}

uint32_t Arena::bell() const { return header(rank_).bell.load(std::memory_order_seq_cst); }

void Arena::sleep(int64_t timeout_us, uint32_t seen) {
  Header &h = header(rank_);
  h.asleep.store(1, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  futex_wait(&h.bell, seen, timeout_us);
  h.asleep.store(0, std::memory_order_relaxed);
}

void Arena::mark_aborted() {
  header(rank_).aborted.store(1, std::memory_order_release);
  wake_self();
  // Peers asleep in a wait must look at the flag now.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    header(r).bell.fetch_add(1, std::memory_order_relaxed);
    futex_wake_all(&header(r).bell);
  }
}

int Arena::aborted_by() const {
  for (int r = 0; r < size_; ++r)
    if (header(r).aborted.load(std::memory_order_acquire)) return r;
  return -1;
}

void Arena::wake_self() {
  Header &h = header(rank_);
  h.bell.fetch_add(1, std::memory_order_relaxed);
  futex_wake_all(&h.bell);
}

// Every counter says "done with round" as round + 1, the value wait_counter()
// waits for; one store for all three keeps that pairing in one place.
void Arena::post_counter(int which, uint64_t round, bool wake) {
  header(rank_).counters[which].value.store(round + 1, std::memory_order_release);
  if (wake) wake_sleepers();
}

void Arena::wait_counter(int which, uint64_t value, Waiter &w, int only) {
  for (int r = 0; r < size_; ++r) {
    if (only >= 0 && r != only) continue;
    // What was seen last time is often enough (a slot's reuse needs a round
    // consumed many rounds ago): then the peer's cache line is not touched.
    uint64_t &seen = seen_[static_cast<size_t>(r) * 3 + which];
    if (seen >= value) continue;
    auto &c = header(r).counters[which].value;
    seen = c.load(std::memory_order_acquire);
    if (seen >= value) continue;
    w.start();
    while ((seen = c.load(std::memory_order_acquire)) < value) w.pause();
  }
  if (which == kConsumed && only < 0) {
    uint64_t least = seen_[kConsumed];
    for (int r = 1; r < size_; ++r)
      least = std::min(least, seen_[static_cast<size_t>(r) * 3 + kConsumed]);
    min_consumed_seen_ = least;
  }
}

void Arena::wait_reusable(uint64_t round, bool small, Waiter &w) {
  // Descriptors are reused after kRounds rounds, never sooner than buffers.
  uint64_t ahead = reach(small);
  if (round >= ahead) wait_counter(kConsumed, round - ahead + 1, w);
}

void Arena::post(uint64_t round, bool wake) { post_counter(kPosted, round, wake); }

void Arena::post_ready(uint64_t round) {
  __atomic_store_n(&header(rank_).desc[round % kRounds].ready, round + 1, __ATOMIC_RELEASE);
}

void Arena::wait_ready(uint64_t round, Waiter &w, int only) {
  for (int r = 0; r < size_; ++r) {
    if (r == rank_ || (only >= 0 && r != only)) continue;
    const uint64_t *ready = &header(r).desc[round % kRounds].ready;
    if (__atomic_load_n(ready, __ATOMIC_ACQUIRE) > round) continue;
    auto &posted = header(r).counters[kPosted].value;
    w.start();
    for (uint32_t polls = 1;; ++polls) {
      if (__atomic_load_n(ready, __ATOMIC_ACQUIRE) > round) break;
      // Now and then the counter: a member that ran other arguments posts
      // only there (rarely read, so the poster's line stays in its cache).
      if ((polls & 63) == 0 && posted.load(std::memory_order_acquire) > round) break;
      w.pause();
    }
  }
}

void Arena::wait_posted(uint64_t round, Waiter &w) { wait_counter(kPosted, round + 1, w); }
void Arena::wait_posted_by(int r, uint64_t round, Waiter &w) {
  wait_counter(kPosted, round + 1, w, r);
}

void Arena::post_reduced(uint64_t round) { post_counter(kReduced, round, true); }

void Arena::wait_reduced(uint64_t round, Waiter &w) { wait_counter(kReduced, round + 1, w); }
void Arena::wait_reduced_by(int r, uint64_t round, Waiter &w) {
  wait_counter(kReduced, round + 1, w, r);
}

void Arena::post_consumed(uint64_t round) { post_counter(kConsumed, round, true); }

bool Arena::publish_shared(uint64_t id, const std::vector<uint8_t> &handle) {
  auto &rec = header(rank_).shared;
  if (handle.size() > sizeof rec.handle) return false;
  if (published_id_ == id) return true;
  memcpy(rec.handle, handle.data(), handle.size());
  rec.handle_size = static_cast<uint32_t>(handle.size());
  rec.id = id;
  published_id_ = id;
  return true;
}

const uint8_t *Arena::peer_shared(Comm &comm, int r, uint64_t id) {
  std::vector<PeerBlock> &blocks = peer_blocks_[static_cast<size_t>(r)];
  ++uses_;
  for (PeerBlock &b : blocks)
    if (b.id == id) {
      b.used = uses_;
      return b.base;
    }
  const auto &rec = header(r).shared;
  if (rec.id != id || rec.handle_size > sizeof rec.handle)
    fail(SMD_ERR_INTERNAL, "rank %d offered shared block %llu but published %llu", r,
         static_cast<unsigned long long>(id), static_cast<unsigned long long>(rec.id));
  Bytes handle(rec.handle, rec.handle + rec.handle_size);
  // A handful of mappings per member: an application allocates pools.
  constexpr size_t kKept = 8;
  if (blocks.size() >= kKept) {
    auto oldest = blocks.begin();
    for (auto it = blocks.begin(); it != blocks.end(); ++it)
      if (it->used < oldest->used) oldest = it;
    transport_->segment_release(oldest->segment);
    blocks.erase(oldest);
  }
  void *ptr = nullptr;
  size_t got = 0;
  void *seg =
      transport_->segment_attach(comm.ctx().endpoint(comm.world_rank(r)), handle, &ptr, &got);
  blocks.push_back(PeerBlock{id, static_cast<const uint8_t *>(ptr), seg, uses_});
  return blocks.back().base;
}

void Arena::wait_consumed(uint64_t round, Waiter &w) { wait_counter(kConsumed, round + 1, w); }

std::vector<int> Arena::not_posted(uint64_t round) const {
  std::vector<int> v;
  for (int r = 0; r < size_; ++r)
    if (header(r).counters[kPosted].value.load(std::memory_order_acquire) < round + 1)
      v.push_back(r);
  return v;
}

}  // namespace smd
