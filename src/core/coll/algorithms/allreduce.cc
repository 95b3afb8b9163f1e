// allreduce: direct (shared-memory arena), ring (reduce-scatter +
// allgather, bandwidth-optimal over messages) and recursive doubling
// (latency-optimal over messages).
#include <algorithm>
#include <vector>

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
#include "core/reduce/reduce.h"

namespace smd {

void allreduce_direct(Comm &c, const CollArgs &a) {
  if (tiny_fits(a, c.size())) return run_tiny(c, a);
  int p = c.size(), me = c.rank();
  size_t es = datatype_size(a.datatype), n = a.count;
  Reduction red = reduction_of(a.op, p);
  size_t chunk = c.arena()->chunk();
  if (n * es <= direct_eager_limit(p, chunk)) {
    // One round: everyone stages its input and reduces all of them (its
    // own straight from sendbuf). Peers may read sendbuf in place unless
    // recvbuf is sendbuf (this member writes the result while they read).
    direct_eager_reduce(c, a, red, a.sendbuf != a.recvbuf ? a.sendbuf : nullptr, a.recvbuf,
                        "allreduce");
    return;
  }
  // Pipelined rounds: each member stages the slices of the round's chunk
  // that the others reduce, reduces its own slice (its input from sendbuf)
  // into the hole left in its staging buffer, then everyone copies all
  // slices out. The copy-out of a round waits until the next round is
  // reduced: by then the peers have long finished the slices it reads, so
  // a round costs one wait for the slowest member instead of two.
  RoundSlices rounds{n, chunk / es};
  DirectOp d(c, a, rounds.count(), chunk, "allreduce");
  // In memory from smd_mem_alloc, peers reduce their slices of my input
  // where it lies. In place (recvbuf == sendbuf) too: a round's slices are
  // written to recvbuf only once every member has reduced that round, and
  // the last round's wait_reduced means every peer is done with my input,
  // so no end_in_place() wait is needed.
  d.use_in_place(a.sendbuf, n * es);
  size_t align = line_elems(es);
  auto copy_round = [&](uint64_t k) {
    Range rk = rounds[k];
    d.wait_reduced(k);
    for (int j = 0; j < p; ++j) {
      if (j == me) continue;  // copied as soon as it was reduced
      Range part = split_aligned(rk.len, p, j, align);
      copy_out(at(a.recvbuf, rk.off + part.off, es), d.buf(j, k) + part.off * es, part.len * es,
               n * es);
    }
    d.finish(k);
  };
  for (uint64_t k = 0; k < rounds.count(); ++k) {
    Range rk = rounds[k];
    Range mine = d.reduce_my_slice(k, rk, red);
    // My slice while it is still in the first-level caches.
    copy_out(at(a.recvbuf, rk.off + mine.off, es), d.buf(me, k) + mine.off * es, mine.len * es,
             n * es);
    if (k > 0) copy_round(k - 1);
  }
  copy_round(rounds.count() - 1);
}

void allreduce_ring(Comm &c, const CollArgs &a) {
  size_t es = datatype_size(a.datatype);
  ops_of(a).copy(a.recvbuf, a.sendbuf, a.count * es);
  uint64_t seq = c.next_seq();
  std::vector<Range> segs = even_segments(a.count, c.size());
  ring_reduce_scatter(c, ops_of(a), a.recvbuf, segs, a.datatype, reduction_of(a.op, c.size()), seq,
                      0);
  ring_allgather(c, a.recvbuf, segs, es, 1, seq, uint32_t(c.size()));
}

// Recursive doubling. Ranks beyond the largest power of two first fold
// their input into a partner and get the result back at the end. Every
// rank combines the same partial results in the same order, so all ranks
// end with identical bits.
void allreduce_rd(Comm &c, const CollArgs &a) {
  int p = c.size(), r = c.rank();
  size_t es = datatype_size(a.datatype), bytes = a.count * es;
  Reduction red = reduction_of(a.op, p);
  uint64_t seq = c.next_seq();
  const MemoryOps &m = ops_of(a);
  m.copy(a.recvbuf, a.sendbuf, bytes);
  Scratch tmp(m, bytes);
  int pow2 = 1;
  while (pow2 * 2 <= p) pow2 *= 2;
  int extra = p - pow2;
  uint32_t step = 0;
  int vrank;  // rank among the power-of-two participants, -1 if folded out
  if (r < 2 * extra) {
    if (r % 2 == 0) {
      P2PReq s = c.isend(r + 1, a.recvbuf, bytes, coll_tag(c.tag_space(), seq, step));
      c.wait(s, "allreduce");
      vrank = -1;
    } else {
      P2PReq q = c.irecv(r - 1, tmp.data(), bytes, coll_tag(c.tag_space(), seq, step));
      c.wait(q, "allreduce");
      m.reduce2(a.recvbuf, tmp.data(), a.recvbuf, a.count, a.datatype, red.op);
      vrank = r / 2;
    }
  } else {
    vrank = r - extra;
  }
  ++step;
  auto real = [&](int v) { return v < extra ? 2 * v + 1 : v + extra; };
  if (vrank >= 0) {
    for (int mask = 1; mask < pow2; mask <<= 1, ++step) {
      int partner = real(vrank ^ mask);
      c.sendrecv(partner, a.recvbuf, bytes, partner, tmp.data(), bytes,
                 coll_tag(c.tag_space(), seq, step), "allreduce");
      // Lower virtual rank's value first: both partners compute lower op upper.
      if (vrank & mask) m.reduce2(a.recvbuf, tmp.data(), a.recvbuf, a.count, a.datatype, red.op);
      else m.reduce2(a.recvbuf, a.recvbuf, tmp.data(), a.count, a.datatype, red.op);
    }
  } else {
    step = 1;
    for (int mask = 1; mask < pow2; mask <<= 1) ++step;
  }
  if (red.divisor > 1) m.divide(a.recvbuf, a.count, a.datatype, red.divisor);
  if (r < 2 * extra) {
    uint64_t tag = coll_tag(c.tag_space(), seq, step);
    if (r % 2 == 0) {
      P2PReq q = c.irecv(r + 1, a.recvbuf, bytes, tag);
      c.wait(q, "allreduce");
    } else {
      P2PReq s = c.isend(r - 1, a.recvbuf, bytes, tag);
      c.wait(s, "allreduce");
    }
  }
}

namespace {
// ring: 2(p-1) steps of a p-th of the vector, and (p-1)/p of it reduced.
double allreduce_ring_cost(int p, double bytes, const LinkCost &l, double reduce_gbps) {
  return 2 * (p - 1) * l.time_us(bytes / p) + reduce_us(bytes * (p - 1) / p, reduce_gbps);
}
// rd: log p exchanges and reductions of the whole vector (+2 steps for
// the folded ranks).
double allreduce_rd_cost(int p, double bytes, const LinkCost &l, double reduce_gbps) {
  double rounds = log2_rounds(p);
  return (rounds + (power_of_two(p) ? 0 : 2)) * l.time_us(bytes) +
         rounds * reduce_us(bytes, reduce_gbps);
}
// This collective's rows of the registry, in the order the automatic
// choice compares them (the first of equal costs wins).
const AlgoEntry kRows[] = {
    direct_row(CollKind::kAllreduce, allreduce_direct),
    hierarchical_row(CollKind::kAllreduce, allreduce_hierarchical),
    p2p_row<allreduce_ring_cost>(CollKind::kAllreduce, Algo::kRing, "ring", allreduce_ring),
    p2p_row<allreduce_rd_cost>(CollKind::kAllreduce, Algo::kRd, "rd", allreduce_rd),
    {CollKind::kAllreduce, Algo::kHerring, "herring", kAnyMemory, herring_applies,
     p2p_cost<allreduce_herring_cost>, allreduce_herring, false, allreduce_herring_cost},
};
}  // namespace

std::span<const AlgoEntry> allreduce_rows() { return kRows; }

}  // namespace smd
