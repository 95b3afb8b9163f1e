#include "core/coll/agreement.h"

#include <cstring>
#include <string>

#include "core/comm/communicator.h"
#include "core/util/dtype.h"
#include "core/util/error.h"
#include "core/util/params.h"

namespace smd {

namespace {

// What every member must agree on; fields that the collective ignores are
// zero, so they cannot disagree.
struct Fingerprint {
  int32_t kind = 0, datatype = 0, op = 0, root = 0;
  uint64_t count = 0;
  bool operator<(const Fingerprint &o) const { return memcmp(this, &o, sizeof o) < 0; }
  bool operator==(const Fingerprint &o) const { return memcmp(this, &o, sizeof o) == 0; }
};

// The lowest and highest fingerprint seen, and whose they are.
struct Extremes {
  Fingerprint low, high;
  int32_t low_rank = 0, high_rank = 0;
  void merge(const Extremes &o) {
    if (o.low < low) low = o.low, low_rank = o.low_rank;
    if (high < o.high) high = o.high, high_rank = o.high_rank;
  }
};

Fingerprint fingerprint_of(const CollArgs &a) {
  Fingerprint f;
  memset(&f, 0, sizeof f);  // padding too: fingerprints compare as bytes
  f.kind = static_cast<int32_t>(a.kind);
  if (a.kind != CollKind::kBarrier) {
    f.datatype = static_cast<int32_t>(a.datatype);
    f.count = a.count;
  }
  bool reduces = a.kind == CollKind::kAllreduce || a.kind == CollKind::kReduceScatter ||
                 a.kind == CollKind::kReduce || a.kind == CollKind::kReduceScatterv;
  if (reduces) f.op = static_cast<int32_t>(a.op);
  if (a.kind == CollKind::kBroadcast || a.kind == CollKind::kReduce || per_rank_blocks(a.kind))
    f.root = a.root;  // v-collectives: the counts' digest
  return f;
}

std::string describe(const Fingerprint &f) {
  CollKind kind = static_cast<CollKind>(f.kind);
  std::string s = coll_name(kind);
  if (kind == CollKind::kBarrier) return s;
  s += format(" of %llu %s", static_cast<unsigned long long>(f.count),
              datatype_name(static_cast<smd_datatype_t>(f.datatype)));
  if (kind == CollKind::kAllreduce || kind == CollKind::kReduceScatter || kind == CollKind::kReduce ||
      kind == CollKind::kReduceScatterv)
    s += format(" (op %d)", f.op);
  if (kind == CollKind::kBroadcast || kind == CollKind::kReduce) s += format(" from root %d", f.root);
  if (per_rank_blocks(kind)) s += format(" with counts digest %08x", static_cast<uint32_t>(f.root));
  return s;
}

// Tags of the check: setup traffic, bit 21 set (the setup exchanges use
// small low values), the call's sequence number and the round.
uint64_t check_tag(const Comm &c, uint64_t seq, int round) {
  uint32_t low = (1u << 21) | static_cast<uint32_t>((seq & 0x3FF) << 5) | static_cast<uint32_t>(round);
  return make_tag(TagKind::kSetup, c.id(), low);
}

}  // namespace

bool agreement_enabled() {
  std::string mode = param_string("SMD_CHECK");
  if (mode == "off" || mode.empty()) return false;
  if (mode == "fast") return true;
  fail(SMD_ERR_INVALID_ARGUMENT, "SMD_CHECK=%s: expected off or fast", mode.c_str());
}

void agree_on_call(Comm &c, const CollArgs &a) {
  int p = c.size(), me = c.rank();
  if (p < 2) return;
  Extremes mine;
  mine.low = mine.high = fingerprint_of(a);
  mine.low_rank = mine.high_rank = me;
  uint64_t seq = c.peek_seq();
  // Dissemination: after round k a member has merged those 2^(k+1) - 1
  // before it; min and max are idempotent, so overlaps do no harm.
  for (int round = 0, dist = 1; dist < p; ++round, dist *= 2) {
    Extremes theirs;
    uint64_t tag = check_tag(c, seq, round);
    ReqSet set(c);
    set.add(c.irecv((me - dist + p) % p, &theirs, sizeof theirs, tag));
    set.add(c.isend((me + dist) % p, &mine, sizeof mine, tag));
    set.wait_all("agreement check");
    mine.merge(theirs);  // the send is complete: mine may change
  }
  if (mine.low == mine.high) return;
  fail(SMD_ERR_MISMATCH,
       "%s on %s: the ranks called different collectives or with different arguments: %s on "
       "rank %d, %s on rank %d",
       coll_name(a.kind), c.where().c_str(), describe(mine.low).c_str(), mine.low_rank,
       describe(mine.high).c_str(), mine.high_rank);
}

}  // namespace smd
