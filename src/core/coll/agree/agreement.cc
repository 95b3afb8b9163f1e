#include "core/coll/agree/agreement.h"

#include <string>

#include "core/coll/agree/call_fingerprint.h"
#include "core/comm/communicator.h"
#include "core/util/dtype.h"
#include "core/util/error.h"
#include "core/util/params.h"

namespace smd {

namespace {

// The lowest and highest fingerprint seen, and whose they are.
struct Extremes {
  CallFingerprint low, high;
  int32_t low_rank = 0, high_rank = 0;
  void merge(const Extremes &o) {
    if (o.low < low) low = o.low, low_rank = o.low_rank;
    if (high < o.high) high = o.high, high_rank = o.high_rank;
  }
};

// Tags of the check: setup traffic, bit 21 set (the setup exchanges use
// small low values), the call's sequence number and the round.
uint64_t check_tag(const Comm &c, uint64_t seq, int round) {
  uint32_t low =
      (1u << 21) | static_cast<uint32_t>((seq & 0x3FF) << 5) | static_cast<uint32_t>(round);
  return make_tag(TagKind::kSetup, c.id(), low);
}

}  // namespace

CheckMode check_mode() {
  std::string mode = param_string("SMD_CHECK");
  if (mode == "off") return CheckMode::kOff;
  if (mode == "fast" || mode.empty()) return CheckMode::kFast;
  if (mode == "full") return CheckMode::kFull;
  fail(SMD_ERR_INVALID_ARGUMENT, "SMD_CHECK=%s: expected off, fast or full", mode.c_str());
}

void agree_on_call(Comm &c, const CollArgs &a) {
  int p = c.size(), me = c.rank();
  if (p < 2) return;
  Extremes mine;
  mine.low = mine.high = fingerprint_of(a, 0);
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
