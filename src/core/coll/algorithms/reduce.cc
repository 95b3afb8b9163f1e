// reduce: direct (arena), ring (reduce-scatter, then the root gathers the
// finished segments) and binomial tree.
#include <algorithm>
#include <vector>

#include "core/coll/algorithms/algorithms.h"
#include "core/coll/create/hierarchy.h"
#include "core/coll/select/registry.h"
#include "core/coll/select/row_terms.h"
#include "core/coll/coll_util.h"
#include "core/coll/algorithms/blocks/direct.h"
#include "core/coll/algorithms/blocks/stream_copy.h"
#include "core/coll/algorithms/blocks/ring.h"
#include "core/comm/communicator.h"
#include "core/reduce/reduce.h"

namespace smd {

void reduce_direct(Comm &c, const CollArgs &a) {
  int p = c.size(), me = c.rank();
  bool root = me == a.root;
  size_t es = datatype_size(a.datatype), n = a.count;
  Reduction red = reduction_of(a.op, p);
  size_t chunk = c.arena()->chunk();
  if (n * es <= direct_eager_limit(p, chunk)) {
    // Read in place unless the root's recvbuf is its sendbuf.
    direct_eager_reduce(c, a, red, root && a.sendbuf == a.recvbuf ? nullptr : a.sendbuf,
                        root ? a.recvbuf : nullptr, "reduce");
    return;
  }
  RoundSlices rounds{n, chunk / es};
  DirectOp d(c, a, rounds.count(), chunk, "reduce");
  // Slices of my input are reduced where they lie by the members that own
  // them (the root writes recvbuf only from reduced staging).
  d.use_in_place(a.sendbuf, n * es);
  size_t align = line_elems(es);
  for (uint64_t k = 0; k < rounds.count(); ++k) {
    Range rk = rounds[k];
    d.reduce_my_slice(k, rk, red);
    if (root) {
      d.wait_reduced(k);
      for (int j = 0; j < p; ++j) {
        Range part = split_aligned(rk.len, p, j, align);
        copy_bytes(at(a.recvbuf, rk.off + part.off, es), d.buf(j, k) + part.off * es,
                   part.len * es);
      }
    }
    d.finish(k);
  }
  d.end_in_place();
}

void reduce_ring(Comm &c, const CollArgs &a) {
  int p = c.size(), me = c.rank();
  size_t es = datatype_size(a.datatype), n = a.count;
  uint64_t seq = c.next_seq();
  const MemoryOps &m = ops_of(a);
  Scratch work(m, a.sendbuf, n * es);
  std::vector<Range> segs = even_segments(n, p);
  ring_reduce_scatter(c, m, work.data(), segs, a.datatype, reduction_of(a.op, p), seq, 0);
  // Rank r holds the final segment (r+1) % p; the root collects them.
  uint64_t tag = coll_tag(c.tag_space(), seq, uint32_t(p));
  ReqSet set(c);
  if (me == a.root) {
    for (int r = 0; r < p; ++r) {
      const Range &s = segs[(r + 1) % p];
      if (r == me) m.copy(at(a.recvbuf, s.off, es), work.data() + s.off * es, s.len * es);
      else set.add(c.irecv(r, at(a.recvbuf, s.off, es), s.len * es, tag));
    }
  } else {
    const Range &s = segs[(me + 1) % p];
    set.add(c.isend(a.root, work.data() + s.off * es, s.len * es, tag));
  }
  set.wait_all("reduce");
}

void reduce_tree(Comm &c, const CollArgs &a) {
  int p = c.size(), me = c.rank();
  int vr = (me - a.root + p) % p;
  size_t es = datatype_size(a.datatype), n = a.count;
  Reduction red = reduction_of(a.op, p);
  uint64_t tag = coll_tag(c.tag_space(), c.next_seq(), 0);
  const MemoryOps &m = ops_of(a);
  std::unique_ptr<Scratch> own;
  void *acc = a.recvbuf;
  if (me != a.root) {
    own = std::make_unique<Scratch>(m, n * es);
    acc = own->data();
  }
  m.copy(acc, a.sendbuf, n * es);
  Scratch tmp(m, n * es);
  for (int mask = 1; mask < p; mask <<= 1) {
    if (vr & mask) {
      P2PReq s = c.isend((vr - mask + a.root) % p, acc, n * es, tag);
      c.wait(s, "reduce");
      return;
    }
    if (vr + mask < p) {
      P2PReq q = c.irecv((vr + mask + a.root) % p, tmp.data(), n * es, tag);
      c.wait(q, "reduce");
      // Own (lower virtual rank) partial first.
      m.reduce2(acc, acc, tmp.data(), n, a.datatype, red.op);
    }
  }
  if (red.divisor > 1) m.divide(acc, n, a.datatype, red.divisor);
}

namespace {
// ring: a pipelined chain, p-1 hops of latency plus the vector once,
// and one reduction of it.
double reduce_ring_cost(int p, double bytes, const LinkCost &l, double reduce_gbps) {
  return (p - 1) * l.alpha_us + l.time_us(bytes) * (1 + (p - 1) * 0.05) +
         reduce_us(bytes, reduce_gbps);
}
// tree: log p steps of the whole vector, each reduced.
double reduce_tree_cost(int p, double bytes, const LinkCost &l, double reduce_gbps) {
  return log2_rounds(p) * (l.time_us(bytes) + reduce_us(bytes, reduce_gbps));
}
// This collective's rows of the registry, in the order the automatic
// choice compares them (the first of equal costs wins).
const AlgoEntry kRows[] = {
    direct_row(CollKind::kReduce, reduce_direct),
    hierarchical_row(CollKind::kReduce, reduce_hierarchical),
    p2p_row<reduce_ring_cost>(CollKind::kReduce, Algo::kRing, "ring", reduce_ring),
    p2p_row<reduce_tree_cost>(CollKind::kReduce, Algo::kTree, "tree", reduce_tree),
};
}  // namespace

std::span<const AlgoEntry> reduce_rows() { return kRows; }

}  // namespace smd
