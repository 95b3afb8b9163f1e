// alltoall: direct (arena) and pairwise exchange.
#include <algorithm>
#include <vector>

#include "core/coll/algorithms/algorithms.h"
#include "core/coll/select/registry.h"
#include "core/coll/select/row_terms.h"
#include "core/coll/coll_util.h"
#include "core/coll/algorithms/blocks/direct.h"
#include "core/comm/communicator.h"

namespace smd {

void alltoall_direct(Comm &c, const CollArgs &a) {
  int p = c.size(), me = c.rank();
  size_t es = datatype_size(a.datatype), n = a.count;
  RoundSlices rounds = block_round_slices(c.arena()->chunk(), p, n, es);
  // Blocks' slices lie `stride` elements apart in the staging buffer.
  size_t stride = std::min(n, rounds.per_round);
  DirectOp d(c, a, rounds.count(), stride * p * es, "alltoall");
  for (uint64_t k = 0; k < rounds.count(); ++k) {
    Range rk = rounds[k];
    // Stage this slice of every block; in place is safe because a rank's
    // slices are all staged before any of them is overwritten.
    uint8_t *mine = d.begin(k);
    for (int b = 0; b < p; ++b)
      copy_bytes(mine + b * stride * es, at(a.sendbuf, b * n + rk.off, es), rk.len * es);
    d.post_and_wait(k);
    for (int j = 0; j < p; ++j)
      copy_bytes(at(a.recvbuf, j * n + rk.off, es), d.buf(j, k) + me * stride * es, rk.len * es);
    d.finish(k);
  }
}

void alltoall_pairwise(Comm &c, const CollArgs &a) {
  int p = c.size(), me = c.rank();
  size_t es = datatype_size(a.datatype), block = a.count * es;
  const MemoryOps &m = ops_of(a);
  const void *src = a.sendbuf;
  std::unique_ptr<Scratch> copy;
  if (a.sendbuf == a.recvbuf) {  // blocks still to send would be overwritten
    copy = std::make_unique<Scratch>(m, p * block);
    m.copy(copy->data(), a.sendbuf, p * block);
    src = copy->data();
  }
  m.copy(static_cast<uint8_t *>(a.recvbuf) + me * block,
         static_cast<const uint8_t *>(src) + me * block, block);
  uint64_t seq = c.next_seq();
  for (int s = 1; s < p; ++s) {
    int to = (me + s) % p, from = (me - s + p) % p;
    c.sendrecv(to, static_cast<const uint8_t *>(src) + to * block, block, from,
               static_cast<uint8_t *>(a.recvbuf) + from * block, block,
               coll_tag(c.tag_space(), seq, s), "alltoall");
  }
}

namespace {
// pairwise: p-1 exchanges of one block.
double alltoall_pairwise_cost(int p, double bytes, const LinkCost &l, double /*reduce_gbps*/) {
  return (p - 1) * l.time_us(bytes);
}
// This collective's rows of the registry, in the order the automatic
// choice compares them (the first of equal costs wins).
const AlgoEntry kRows[] = {
    direct_row(CollKind::kAlltoall, alltoall_direct),
    p2p_row<alltoall_pairwise_cost>(CollKind::kAlltoall, Algo::kPairwise, "pairwise",
                                    alltoall_pairwise),
};
}  // namespace

std::span<const AlgoEntry> alltoall_rows() { return kRows; }

}  // namespace smd
