// alltoallv: pairwise exchange with per-pair sizes. Ranks' counts differ
// by design (rank i's sendcounts[j] is rank j's recvcounts[i]), so the call
// check cannot compare them; each pair checks its own size instead: a
// message longer than its receive fails in the transport, a shorter one
// here, both as SMD_ERR_TRUNCATED on the receiving rank. So that the
// sending rank fails too (not SMD_SUCCESS beside a receiver that refused
// its block), each step also tells the rank it receives from how many
// elements it expects, beside the data (8 bytes each way).
#include <algorithm>
#include <vector>

#include "core/coll/algorithms/algorithms.h"
#include "core/coll/select/registry.h"
#include "core/coll/select/row_terms.h"
#include "core/coll/coll_util.h"
#include "core/comm/communicator.h"
#include "core/util/error.h"

namespace smd {

namespace {

// A message shorter than its receive (a longer one fails in the transport).
void check_received(const P2PReq &r, int me, int from, size_t want, size_t es) {
  if (r.bytes != want)
    fail(SMD_ERR_TRUNCATED,
         "rank %d sent %zu elements to rank %d, whose recvcounts[%d] is %zu (rank %d's "
         "sendcounts[%d] must equal rank %d's recvcounts[%d])",
         from, r.bytes / es, me, from, want / es, from, me, me, from);
}

}  // namespace

void alltoallv_pairwise(Comm &c, const CollArgs &a) {
  int p = c.size(), me = c.rank();
  const BlockLayout &in = *a.send_blocks, &out = *a.blocks;
  size_t es = datatype_size(a.datatype);
  auto send_at = [&](int r) { return at(a.sendbuf, in.displs[size_t(r)], es); };
  auto recv_at = [&](int r) { return at(a.recvbuf, out.displs[size_t(r)], es); };
  if (in.counts[size_t(me)] != out.counts[size_t(me)])
    fail(SMD_ERR_TRUNCATED, "sendcounts[%d] is %zu but recvcounts[%d] is %zu on rank %d", me,
         in.counts[size_t(me)], me, out.counts[size_t(me)], me);
  ops_of(a).copy(recv_at(me), send_at(me), in.counts[size_t(me)] * es);
  uint64_t seq = c.next_seq();
  // Every pair's expectation message has step 0 (the data's steps start
  // at 1): one per ordered pair and call.
  uint64_t expect_tag = coll_tag(c.tag_space(), seq, 0);
  // Step s: send to me+s, receive from me-s; every pair meets once, and
  // zero-sized blocks still travel, so that 0-versus-n disagreements show.
  for (int s = 1; s < p; ++s) {
    int to = (me + s) % p, from = (me - s + p) % p;
    size_t want = out.counts[size_t(from)] * es;
    uint64_t tag = coll_tag(c.tag_space(), seq, s);
    uint64_t expected_by_to = 0, i_expect = out.counts[size_t(from)];
    ReqSet set(c);
    P2PReq &er = set.add(c.irecv(to, &expected_by_to, sizeof expected_by_to, expect_tag));
    set.add(c.isend(from, &i_expect, sizeof i_expect, expect_tag));
    P2PReq &rr = set.add(c.irecv(from, recv_at(from), want, tag));
    set.add(c.isend(to, send_at(to), in.counts[size_t(to)] * es, tag));
    try {
      set.wait_all("alltoallv");
    } catch (const Error &e) {
      if (e.code() != SMD_ERR_TRUNCATED) throw;
      fail(SMD_ERR_TRUNCATED,
           "rank %d sent more than the %zu elements of recvcounts[%d] on rank %d (rank "
           "%d's sendcounts[%d] must equal rank %d's recvcounts[%d])",
           from, want / es, from, me, from, me, me, from);
    }
    check_received(rr, me, from, want, es);
    if (er.bytes != sizeof expected_by_to || expected_by_to != in.counts[size_t(to)])
      fail(SMD_ERR_TRUNCATED,
           "rank %d expects %llu elements from rank %d (its recvcounts[%d]), but sendcounts[%d] "
           "is %zu here (rank %d's sendcounts[%d] must equal rank %d's recvcounts[%d])",
           to, static_cast<unsigned long long>(expected_by_to), me, me, to, in.counts[size_t(to)],
           me, to, to, me);
  }
}

namespace {
// This collective's rows of the registry, in the order the automatic
// choice compares them (the first of equal costs wins).
const AlgoEntry kRows[] = {
    {CollKind::kAlltoallv, Algo::kPairwise, "pairwise", kAnyMemory, anywhere, v_pairwise_cost,
     alltoallv_pairwise},
};
}  // namespace

std::span<const AlgoEntry> alltoallv_rows() { return kRows; }

}  // namespace smd
