// reduce_scatterv: direct (arena), ring, hierarchical (one reduce_scatterv
// per node inside the node, then one along the rail).
#include <algorithm>
#include <vector>

#include "core/coll/algorithms/algorithms.h"
#include "core/coll/select/registry.h"
#include "core/coll/select/row_terms.h"
#include "core/coll/coll_util.h"
#include "core/coll/algorithms/blocks/direct.h"
#include "core/coll/create/hierarchy.h"
#include "core/coll/algorithms/blocks/ring.h"
#include "core/coll/algorithms/blocks/stream_copy.h"
#include "core/comm/communicator.h"
#include "core/reduce/reduce.h"

namespace smd {

// Each round stages the same slice of every block the others reduce, the
// blocks' slices `stride` elements apart; each member reduces its own
// block's slice from every member's staging (its own from sendbuf).
void reduce_scatterv_direct(Comm &c, const CollArgs &a) {
  int p = c.size(), me = c.rank();
  const BlockLayout &l = *a.blocks;
  size_t es = datatype_size(a.datatype);
  Reduction red = reduction_of(a.op, p);
  RoundSlices largest = block_round_slices(c.arena()->chunk(), p, l.largest, es);
  size_t per_block = largest.per_round, stride = std::min(l.largest, per_block);
  DirectOp d(c, a, largest.count(), stride * p * es, "reduce_scatterv");
  for (uint64_t k = 0; k < largest.count(); ++k) {
    uint8_t *stage = d.begin(k);
    size_t staged = 0;
    for (int b = 0; b < p; ++b) staged += b == me ? 0 : RoundSlices{l.counts[b], per_block}[k].len;
    for (int b = 0; b < p; ++b) {
      if (b == me) continue;
      Range rb = RoundSlices{l.counts[b], per_block}[k];
      stage_copy(stage + b * stride * es, at(a.sendbuf, l.displs[b] + rb.off, es), rb.len * es,
                 staged * es);
    }
    d.post_and_wait(k);
    Range mine = RoundSlices{l.counts[me], per_block}[k];
    reduce::reduce(at(a.recvbuf, mine.off, es),
                   d.sources(k, 0, me * stride * es, at(a.sendbuf, l.displs[me] + mine.off, es)), p,
                   mine.len, a.datatype, red.op, red.divisor);
    d.finish(k);
  }
}

void reduce_scatterv_ring(Comm &c, const CollArgs &a) {
  int p = c.size(), me = c.rank();
  const BlockLayout &l = *a.blocks;
  size_t es = datatype_size(a.datatype);
  const MemoryOps &m = ops_of(a);
  Scratch work(m, a.sendbuf, l.extent * es);
  std::vector<Range> segs(p);
  // Rotate so that rank r ends holding block r (the ring leaves r+1).
  for (int i = 0; i < p; ++i) segs[(i + 1) % p] = Range{l.displs[i], l.counts[i]};
  ring_reduce_scatter(c, m, work.data(), segs, a.datatype, reduction_of(a.op, p), c.next_seq(), 0);
  m.copy(a.recvbuf, work.data() + l.displs[me] * es, l.counts[me] * es);
}

// The mirror of allgatherv_hierarchical: inside the node, one
// reduce_scatterv per node's blocks (each member gets its node's partial
// sum of the block of its local index on that node), then along the rail
// a reduce_scatterv of those partial sums.
void reduce_scatterv_hierarchical(Comm &c, const CollArgs &a) {
  Hierarchy &h = hierarchy_of(c);
  const BlockLayout &l = *a.blocks;
  size_t es = datatype_size(a.datatype);
  Reduction red = reduction_of(a.op, c.size());
  // The partial sums, one block per node, packed.
  std::vector<size_t> rail_counts, rail_displs;
  size_t packed = 0;
  for (int k = 0; k < h.nodes; ++k) {
    size_t n = l.counts[h.node_ranks[size_t(k)][size_t(h.local_rank)]];
    rail_counts.push_back(n);
    rail_displs.push_back(packed);
    packed += n;
  }
  uint8_t *partial = h.scratch(ops_of(a), packed * es);
  for (int k = 0; k < h.nodes; ++k) {
    std::vector<size_t> counts, displs;
    for (int r : h.node_ranks[size_t(k)]) {
      counts.push_back(l.counts[r]);
      displs.push_back(l.displs[r]);
    }
    run_collective(*h.node,
                   blocks_args(a, CollKind::kReduceScatterv, a.sendbuf,
                               partial + rail_displs[size_t(k)] * es, counts, displs, red.op));
  }
  run_collective(*h.rail, blocks_args(a, CollKind::kReduceScatterv, partial, a.recvbuf, rail_counts,
                                      rail_displs, red.op));
  if (red.divisor > 1) ops_of(a).divide(a.recvbuf, l.counts[c.rank()], a.datatype, red.divisor);
}

namespace {
// This collective's rows of the registry, in the order the automatic
// choice compares them (the first of equal costs wins).
const AlgoEntry kRows[] = {
    direct_row(CollKind::kReduceScatterv, reduce_scatterv_direct),
    {CollKind::kReduceScatterv, Algo::kHierarchical, "hierarchical", kAnyMemory,
     v_hierarchical_applies, v_hierarchical_cost, reduce_scatterv_hierarchical},
    {CollKind::kReduceScatterv, Algo::kRing, "ring", kAnyMemory, anywhere, v_ring_cost,
     reduce_scatterv_ring},
};
}  // namespace

std::span<const AlgoEntry> reduce_scatterv_rows() { return kRows; }

}  // namespace smd
