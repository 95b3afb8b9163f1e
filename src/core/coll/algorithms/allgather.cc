// allgather: direct (arena), ring, recursive doubling (power-of-two sizes;
// other sizes fall back to the ring).
#include <algorithm>
#include <vector>

#include "core/coll/coll_state.h"
#include "core/coll/algorithms/algorithms.h"
#include "core/coll/create/hierarchy.h"
#include "core/coll/select/registry.h"
#include "core/coll/select/row_terms.h"
#include "core/coll/coll_util.h"
#include "core/coll/algorithms/blocks/direct.h"
#include "core/coll/algorithms/tiny.h"
#include "core/coll/algorithms/blocks/ring.h"
#include "core/coll/algorithms/blocks/stream_copy.h"
#include "core/comm/communicator.h"

namespace smd {

void allgather_direct(Comm &c, const CollArgs &a) {
  if (tiny_fits(a, c.size())) return run_tiny(c, a);
  int p = c.size(), me = c.rank();
  size_t es = datatype_size(a.datatype), n = a.count;
  RoundSlices rounds{n, c.arena()->chunk() / es};
  DirectOp d(c, a, rounds.count(), std::min(n, rounds.per_round) * es, "allgather");
  // In memory from smd_mem_alloc, peers copy my block from sendbuf itself.
  bool offered = d.use_in_place(a.sendbuf, n * es);
  for (uint64_t k = 0; k < rounds.count(); ++k) {
    Range rk = rounds[k];
    // My own block goes to staging (unless offered) and straight to
    // recvbuf in one pass over sendbuf (the second copy a no-op in place).
    uint8_t *stage = d.begin(k);
    stage_and_copy_out(offered ? nullptr : stage, at(a.recvbuf, me * n + rk.off, es),
                       at(a.sendbuf, rk.off, es), rk.len * es, rk.len * es, p * n * es, false,
                       &coll_state(c).slow_transfer);
    d.post_and_wait(k);
    for (int j = 0; j < p; ++j)
      if (j != me)
        copy_out(at(a.recvbuf, j * n + rk.off, es), d.input(j, k, rk.off * es), rk.len * es,
                 p * n * es);
    d.finish(k);
  }
  d.end_in_place();
}

void allgather_ring(Comm &c, const CollArgs &a) {
  int p = c.size(), me = c.rank();
  size_t es = datatype_size(a.datatype);
  ops_of(a).copy(at(a.recvbuf, me * a.count, es), a.sendbuf, a.count * es);
  std::vector<Range> segs(p);
  for (int i = 0; i < p; ++i) segs[i] = Range{i * a.count, a.count};
  ring_allgather(c, a.recvbuf, segs, es, 0, c.next_seq(), 0);
}

void allgather_rd(Comm &c, const CollArgs &a) {
  int p = c.size(), me = c.rank();
  if (p & (p - 1)) return allgather_ring(c, a);
  size_t es = datatype_size(a.datatype), n = a.count;
  ops_of(a).copy(at(a.recvbuf, me * n, es), a.sendbuf, n * es);
  uint64_t seq = c.next_seq();
  uint32_t step = 0;
  // After the step with distance `mask`, each rank holds the 2*mask blocks
  // of its aligned group.
  for (int mask = 1; mask < p; mask <<= 1, ++step) {
    int partner = me ^ mask;
    int mine_start = me & ~(mask - 1), theirs_start = partner & ~(mask - 1);
    c.sendrecv(partner, at(a.recvbuf, mine_start * n, es), mask * n * es, partner,
               at(a.recvbuf, theirs_start * n, es), mask * n * es,
               coll_tag(c.tag_space(), seq, step), "allgather");
  }
}

namespace {
// ring: p-1 steps of one block.
double allgather_ring_cost(int p, double bytes, const LinkCost &l, double /*reduce_gbps*/) {
  return (p - 1) * l.time_us(bytes);
}
// rd: log p messages carrying p-1 blocks in all (+2 messages for the
// folded ranks).
double allgather_rd_cost(int p, double bytes, const LinkCost &l, double /*reduce_gbps*/) {
  return log2_rounds(p) * l.alpha_us + (p - 1) * bytes / (l.gbps * 1e3) +
         (power_of_two(p) ? 0 : 2 * l.alpha_us);
}
// This collective's rows of the registry, in the order the automatic
// choice compares them (the first of equal costs wins).
const AlgoEntry kRows[] = {
    direct_row(CollKind::kAllgather, allgather_direct),
    hierarchical_row(CollKind::kAllgather, allgather_hierarchical),
    p2p_row<allgather_ring_cost>(CollKind::kAllgather, Algo::kRing, "ring", allgather_ring),
    p2p_row<allgather_rd_cost>(CollKind::kAllgather, Algo::kRd, "rd", allgather_rd),
    cma_row(CollKind::kAllgather, allgather_cma),
};
}  // namespace

std::span<const AlgoEntry> allgather_rows() { return kRows; }

}  // namespace smd
