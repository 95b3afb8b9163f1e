// broadcast: direct (arena), ring (pipelined chain: bandwidth-optimal for
// large messages) and binomial tree (latency-optimal for small ones).
#include <algorithm>

#include "core/coll/algorithms/algorithms.h"
#include "core/coll/create/hierarchy.h"
#include "core/coll/select/registry.h"
#include "core/coll/select/row_terms.h"
#include "core/coll/coll_util.h"
#include "core/coll/algorithms/blocks/direct.h"
#include "core/coll/algorithms/tiny.h"
#include "core/coll/algorithms/blocks/stream_copy.h"
#include "core/comm/communicator.h"

namespace smd {

namespace {
constexpr size_t kChainPiece = 512 * 1024;
}

void broadcast_direct(Comm &c, const CollArgs &a) {
  if (tiny_fits(a, c.size())) return run_tiny(c, a);
  int me = c.rank();
  size_t es = datatype_size(a.datatype), n = a.count;
  size_t per_round = c.arena()->chunk() / es;
  uint64_t rounds = std::max<uint64_t>(1, (n + per_round - 1) / per_round);
  DirectOp d(c, a, rounds, std::min(n, per_round) * es, "broadcast");
  // A root's sendbuf in memory from smd_mem_alloc is read where it lies;
  // the root then waits for its receivers at the end.
  bool offered = d.use_in_place(me == a.root ? a.sendbuf : nullptr, n * es);
  // A large broadcast's root stages with streaming stores: the receivers
  // then read the rounds from memory, not from the root's cache. Cache-to-
  // cache transfers are cheap only while the two CPUs share a cache; where
  // they do not (other core complexes or sockets, or a VM whose host moves
  // its virtual CPUs, in periods of seconds) a staged large broadcast takes
  // several times longer, a streaming one about the same in either case
  // (docs/PERFORMANCE.md has the measurements and the machine). Allgathers,
  // faster with ordinary stores whenever transfers are cheap, switch only
  // while they are not (stage_and_copy_out, with the communicator's guard).
  bool stream_stage = streams_output(n * es);
  for (uint64_t k = 0; k < rounds; ++k) {
    Range rk{k * per_round, n > k * per_round ? std::min(per_round, n - k * per_round) : 0};
    uint8_t *mine = d.begin(k);
    // The root stages (unless offered) and fills its own recvbuf in one
    // pass (no copy in place).
    if (me == a.root)
      stage_and_copy_out(offered ? nullptr : mine, at(a.recvbuf, rk.off, es),
                         at(a.sendbuf, rk.off, es), rk.len * es, rk.len * es, n * es, stream_stage);
    d.post_and_wait(k, a.root);
    if (me != a.root)
      copy_out(at(a.recvbuf, rk.off, es), d.input(a.root, k, rk.off * es), rk.len * es, n * es);
    d.finish(k);
  }
  d.end_in_place();
}

void broadcast_ring(Comm &c, const CollArgs &a) {
  int p = c.size(), me = c.rank();
  int vr = (me - a.root + p) % p;
  int next = (me + 1) % p, prev = (me + p - 1) % p;
  size_t bytes = a.count * datatype_size(a.datatype);
  uint64_t tag = coll_tag(c.tag_space(), c.next_seq(), 0);
  if (me == a.root) ops_of(a).copy(a.recvbuf, a.sendbuf, bytes);
  size_t pieces = std::max<size_t>(1, (bytes + kChainPiece - 1) / kChainPiece);
  auto piece = [&](size_t i) {
    size_t off = i * kChainPiece;
    return Range{off, std::min(kChainPiece, bytes - std::min(bytes, off))};
  };
  ReqSet recvs(c), sends(c);
  std::vector<P2PReq *> in(pieces, nullptr);
  if (vr > 0)
    for (size_t i = 0; i < pieces; ++i)
      in[i] = &recvs.add(
          c.irecv(prev, static_cast<uint8_t *>(a.recvbuf) + piece(i).off, piece(i).len, tag));
  for (size_t i = 0; i < pieces; ++i) {
    if (vr > 0) c.wait(*in[i], "broadcast");
    if (vr < p - 1)
      sends.add(c.isend(next, static_cast<uint8_t *>(a.recvbuf) + piece(i).off, piece(i).len, tag));
  }
  sends.wait_all("broadcast");
}

void broadcast_tree(Comm &c, const CollArgs &a) {
  int p = c.size(), me = c.rank();
  int vr = (me - a.root + p) % p;
  size_t bytes = a.count * datatype_size(a.datatype);
  uint64_t tag = coll_tag(c.tag_space(), c.next_seq(), 0);
  if (me == a.root) ops_of(a).copy(a.recvbuf, a.sendbuf, bytes);
  int mask = 1;
  while (mask < p) {
    if (vr & mask) {
      P2PReq q = c.irecv((vr - mask + a.root) % p, a.recvbuf, bytes, tag);
      c.wait(q, "broadcast");
      break;
    }
    mask <<= 1;
  }
  ReqSet sends(c);
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (vr + mask < p) sends.add(c.isend((vr + mask + a.root) % p, a.recvbuf, bytes, tag));
  sends.wait_all("broadcast");
}

namespace {
// ring: a pipelined chain, p-1 hops of latency plus the vector once.
double broadcast_ring_cost(int p, double bytes, const LinkCost &l, double /*reduce_gbps*/) {
  return (p - 1) * l.alpha_us + l.time_us(bytes) * (1 + (p - 1) * 0.05);
}
// tree: log p steps of the whole vector.
double broadcast_tree_cost(int p, double bytes, const LinkCost &l, double /*reduce_gbps*/) {
  return log2_rounds(p) * l.time_us(bytes);
}
// This collective's rows of the registry, in the order the automatic
// choice compares them (the first of equal costs wins).
const AlgoEntry kRows[] = {
    direct_row(CollKind::kBroadcast, broadcast_direct),
    hierarchical_row(CollKind::kBroadcast, broadcast_hierarchical),
    p2p_row<broadcast_ring_cost>(CollKind::kBroadcast, Algo::kRing, "ring", broadcast_ring),
    p2p_row<broadcast_tree_cost>(CollKind::kBroadcast, Algo::kTree, "tree", broadcast_tree),
    cma_row(CollKind::kBroadcast, broadcast_cma),
};
}  // namespace

std::span<const AlgoEntry> broadcast_rows() { return kRows; }

}  // namespace smd
