// reduce_scatter: direct (arena), ring, recursive halving (power-of-two
// sizes; other sizes fall back to the ring).
#include <algorithm>
#include <vector>

#include "core/coll/algorithms/algorithms.h"
#include "core/coll/create/hierarchy.h"
#include "core/coll/select/registry.h"
#include "core/coll/select/row_terms.h"
#include "core/coll/coll_util.h"
#include "core/coll/algorithms/blocks/direct.h"
#include "core/coll/algorithms/blocks/stream_copy.h"
#include "core/coll/algorithms/tiny.h"
#include "core/coll/algorithms/blocks/ring.h"
#include "core/comm/communicator.h"
#include "core/reduce/reduce.h"

namespace smd {

void reduce_scatter_direct(Comm &c, const CollArgs &a) {
  if (tiny_fits(a, c.size())) return run_tiny(c, a);
  int p = c.size(), me = c.rank();
  size_t es = datatype_size(a.datatype), n = a.count;
  // Each round stages the same slice of every block.
  RoundSlices rounds = block_round_slices(c.arena()->chunk(), p, n, es);
  // Blocks' slices lie `stride` elements apart in the staging buffer.
  size_t stride = std::min(n, rounds.per_round);
  DirectOp d(c, a, rounds.count(), stride * p * es, "reduce_scatter");
  // In memory from smd_mem_alloc, peers reduce their blocks straight from
  // sendbuf: nothing is staged. (recvbuf overlaps sendbuf only as my own
  // block, which no peer reads.)
  bool offered = d.use_in_place(a.sendbuf, p * n * es);
  Reduction red = reduction_of(a.op, p);
  for (uint64_t k = 0; k < rounds.count(); ++k) {
    Range rk = rounds[k];
    uint8_t *mine = d.begin(k);
    // Only the blocks others reduce: mine is read from sendbuf.
    for (int b = 0; b < p && !offered; ++b)
      if (b != me)
        stage_copy(mine + b * stride * es, at(a.sendbuf, b * n + rk.off, es), rk.len * es,
                   (p - 1) * rk.len * es);
    d.post_and_wait(k);
    reduce::reduce(
        at(a.recvbuf, rk.off, es),
        d.sources(k, (me * n + rk.off) * es, me * stride * es, at(a.sendbuf, me * n + rk.off, es)),
        p, rk.len, a.datatype, red.op, red.divisor);
    d.finish(k);
  }
  d.end_in_place();
}

void reduce_scatter_ring(Comm &c, const CollArgs &a) {
  int p = c.size(), me = c.rank();
  size_t es = datatype_size(a.datatype), n = a.count;
  const MemoryOps &m = ops_of(a);
  Scratch work(m, a.sendbuf, p * n * es);
  std::vector<Range> segs(p);
  // Rotate so that rank r ends holding block r (the ring leaves r+1).
  for (int i = 0; i < p; ++i) segs[(i + 1) % p] = Range{i * n, n};
  ring_reduce_scatter(c, m, work.data(), segs, a.datatype, reduction_of(a.op, p), c.next_seq(), 0);
  m.copy(a.recvbuf, work.data() + me * n * es, n * es);
}

// Recursive halving: at each step exchange half of the blocks still in
// play with the partner at that distance and keep reducing the other half.
void reduce_scatter_rd(Comm &c, const CollArgs &a) {
  int p = c.size(), me = c.rank();
  if (p & (p - 1)) return reduce_scatter_ring(c, a);
  size_t es = datatype_size(a.datatype), n = a.count;
  Reduction red = reduction_of(a.op, p);
  const MemoryOps &m = ops_of(a);
  Scratch work(m, a.sendbuf, p * n * es);
  Scratch tmp(m, (p / 2) * n * es);
  uint64_t seq = c.next_seq();
  int lo = 0, hi = p;
  uint32_t step = 0;
  for (int mask = p / 2; mask >= 1; mask >>= 1, ++step) {
    int partner = me ^ mask, mid = lo + (hi - lo) / 2;
    bool upper = me & mask;
    int keep_lo = upper ? mid : lo, give_lo = upper ? lo : mid;
    size_t half = static_cast<size_t>(mid - lo) * n;
    c.sendrecv(partner, work.data() + give_lo * n * es, half * es, partner, tmp.data(), half * es,
               coll_tag(c.tag_space(), seq, step), "reduce_scatter");
    // Lower rank's partial first, so both halves combine in one order.
    uint8_t *kept = work.data() + keep_lo * n * es;
    if (upper) m.reduce2(kept, tmp.data(), kept, half, a.datatype, red.op);
    else m.reduce2(kept, kept, tmp.data(), half, a.datatype, red.op);
    if (upper) lo = mid;
    else hi = mid;
  }
  uint8_t *mine = work.data() + me * n * es;
  if (red.divisor > 1) m.divide(mine, n, a.datatype, red.divisor);
  m.copy(a.recvbuf, mine, n * es);
}

namespace {
// ring: p-1 steps of one block, each reduced.
double reduce_scatter_ring_cost(int p, double bytes, const LinkCost &l, double reduce_gbps) {
  return (p - 1) * (l.time_us(bytes) + reduce_us(bytes, reduce_gbps));
}
// rd: log p messages carrying p-1 blocks in all, each reduced (+2
// messages for the folded ranks).
double reduce_scatter_rd_cost(int p, double bytes, const LinkCost &l, double reduce_gbps) {
  return log2_rounds(p) * l.alpha_us +
         (p - 1) * (bytes / (l.gbps * 1e3) + reduce_us(bytes, reduce_gbps)) +
         (power_of_two(p) ? 0 : 2 * l.alpha_us);
}
// This collective's rows of the registry, in the order the automatic
// choice compares them (the first of equal costs wins).
const AlgoEntry kRows[] = {
    direct_row(CollKind::kReduceScatter, reduce_scatter_direct),
    hierarchical_row(CollKind::kReduceScatter, reduce_scatter_hierarchical),
    p2p_row<reduce_scatter_ring_cost>(CollKind::kReduceScatter, Algo::kRing, "ring",
                                      reduce_scatter_ring),
    p2p_row<reduce_scatter_rd_cost>(CollKind::kReduceScatter, Algo::kRd, "rd", reduce_scatter_rd),
    cma_row(CollKind::kReduceScatter, reduce_scatter_cma),
};
}  // namespace

std::span<const AlgoEntry> reduce_scatter_rows() { return kRows; }

}  // namespace smd
