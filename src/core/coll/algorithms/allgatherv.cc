// allgatherv: direct (arena), ring, hierarchical (a rail allgatherv, then
// one allgatherv per node, all in place in recvbuf).
#include <algorithm>
#include <vector>

#include "core/coll/coll_state.h"
#include "core/coll/algorithms/algorithms.h"
#include "core/coll/select/registry.h"
#include "core/coll/select/row_terms.h"
#include "core/coll/coll_util.h"
#include "core/coll/algorithms/blocks/direct.h"
#include "core/coll/create/hierarchy.h"
#include "core/coll/algorithms/blocks/ring.h"
#include "core/coll/algorithms/blocks/stream_copy.h"
#include "core/comm/communicator.h"

namespace smd {

CollArgs blocks_args(const CollArgs &like, CollKind kind, const void *send, void *recv,
                     std::vector<size_t> counts, std::vector<size_t> displs, smd_op_t op) {
  auto l = std::make_shared<BlockLayout>();
  l->counts = std::move(counts);
  l->displs = std::move(displs);
  finish_layout(*l);
  CollArgs a{kind,        send, recv, l->total, like.datatype, op, static_cast<int>(l->digest),
             like.memory, true};
  a.blocks = std::move(l);
  return a;
}

// Every member stages its own block a chunk per round; the others copy it
// out of staging into place. Rounds: enough for the largest block.
void allgatherv_direct(Comm &c, const CollArgs &a) {
  int p = c.size(), me = c.rank();
  const BlockLayout &l = *a.blocks;
  size_t es = datatype_size(a.datatype);
  size_t per_round = c.arena()->chunk() / es;
  uint64_t rounds = RoundSlices{l.largest, per_round}.count();
  DirectOp d(c, a, rounds, std::min(l.largest, per_round) * es, "allgatherv");
  size_t out_bytes = l.total * es;
  for (uint64_t k = 0; k < rounds; ++k) {
    Range mine = RoundSlices{l.counts[me], per_round}[k];
    uint8_t *stage = d.begin(k);
    stage_and_copy_out(stage, at(a.recvbuf, l.displs[me] + mine.off, es),
                       at(a.sendbuf, mine.off, es), mine.len * es, mine.len * es, out_bytes, false,
                       &coll_state(c).slow_transfer);
    d.post_and_wait(k);
    for (int j = 0; j < p; ++j) {
      if (j == me) continue;
      Range rj = RoundSlices{l.counts[j], per_round}[k];
      copy_out(at(a.recvbuf, l.displs[j] + rj.off, es), d.input(j, k, 0), rj.len * es, out_bytes);
    }
    d.finish(k);
  }
}

void allgatherv_ring(Comm &c, const CollArgs &a) {
  int p = c.size(), me = c.rank();
  const BlockLayout &l = *a.blocks;
  size_t es = datatype_size(a.datatype);
  ops_of(a).copy(at(a.recvbuf, l.displs[me], es), a.sendbuf, l.counts[me] * es);
  std::vector<Range> segs(p);
  for (int i = 0; i < p; ++i) segs[i] = Range{l.displs[i], l.counts[i]};
  ring_allgather(c, a.recvbuf, segs, es, 0, c.next_seq(), 0);
}

// With as many members on every node: the members of one local index
// exchange their blocks along the rail, straight into place; then each
// node's blocks, which its members now hold, are gathered inside the
// node, in place too. Only the blocks cross nodes, each once per node.
void allgatherv_hierarchical(Comm &c, const CollArgs &a) {
  Hierarchy &h = hierarchy_of(c);
  const BlockLayout &l = *a.blocks;
  size_t es = datatype_size(a.datatype);
  std::vector<size_t> counts, displs;
  for (int k = 0; k < h.nodes; ++k) {
    int r = h.node_ranks[size_t(k)][size_t(h.local_rank)];
    counts.push_back(l.counts[r]);
    displs.push_back(l.displs[r]);
  }
  run_collective(*h.rail, blocks_args(a, CollKind::kAllgatherv, a.sendbuf, a.recvbuf, counts,
                                      displs, SMD_SUM));
  for (int k = 0; k < h.nodes; ++k) {
    const std::vector<int> &nk = h.node_ranks[size_t(k)];
    counts.clear();
    displs.clear();
    for (int r : nk) {
      counts.push_back(l.counts[r]);
      displs.push_back(l.displs[r]);
    }
    int mine = nk[size_t(h.local_rank)];
    run_collective(*h.node, blocks_args(a, CollKind::kAllgatherv, at(a.recvbuf, l.displs[mine], es),
                                        a.recvbuf, counts, displs, SMD_SUM));
  }
}

namespace {
// This collective's rows of the registry, in the order the automatic
// choice compares them (the first of equal costs wins).
const AlgoEntry kRows[] = {
    direct_row(CollKind::kAllgatherv, allgatherv_direct),
    {CollKind::kAllgatherv, Algo::kHierarchical, "hierarchical", kAnyMemory, v_hierarchical_applies,
     v_hierarchical_cost, allgatherv_hierarchical},
    {CollKind::kAllgatherv, Algo::kRing, "ring", kAnyMemory, anywhere, v_ring_cost,
     allgatherv_ring},
};
}  // namespace

std::span<const AlgoEntry> allgatherv_rows() { return kRows; }

}  // namespace smd
