// The cma algorithms: single-copy collectives among a node's ranks for
// any host buffers. Each member posts where its input lies (its address
// and, known from the arena's setup, its pid) in the operation's
// descriptor, and every reader copies each peer's block straight out of
// that peer's buffer with one cross-memory read: no staging, so each byte
// crosses memory once instead of twice. A member returns only once every
// reader has marked the round consumed, since its buffer is read in place.
// Memory from smd_mem_alloc is mapped and copied instead (DirectOp).
// reduce_scatter reads peers' parts of its own block a piece at a time
// into a scratch that stays in cache and reduces them from there.
#include <algorithm>
#include <vector>

#include "core/coll/algorithms/algorithms.h"
#include "core/coll/coll_util.h"
#include "core/coll/algorithms/blocks/direct.h"
#include "core/coll/algorithms/blocks/stream_copy.h"
#include "core/comm/communicator.h"
#include "core/reduce/reduce.h"

namespace smd {

void allgather_cma(Comm &c, const CollArgs &a) {
  int p = c.size(), me = c.rank();
  size_t es = datatype_size(a.datatype), bytes = a.count * es;
  DirectOp d(c, a, 1, 0, "allgather");
  d.use_cross_memory(a.sendbuf, bytes);
  d.begin(0);
  d.post_and_wait(0);
  copy_out(at(a.recvbuf, size_t(me) * a.count, es), a.sendbuf, bytes, p * bytes);
  // Each member starts with the next one: readers spread over the peers.
  for (int i = 1; i < p; ++i) {
    int j = (me + i) % p;
    d.read_input(j, at(a.recvbuf, size_t(j) * a.count, es), 0, bytes);
  }
  d.finish(0);
  d.end_in_place();
}

void broadcast_cma(Comm &c, const CollArgs &a) {
  int me = c.rank();
  size_t bytes = a.count * datatype_size(a.datatype);
  DirectOp d(c, a, 1, 0, "broadcast");
  d.use_cross_memory(me == a.root ? a.sendbuf : nullptr, bytes);
  d.begin(0);
  d.post_and_wait(0, a.root);
  if (me == a.root) copy_out(a.recvbuf, a.sendbuf, bytes, bytes);
  else d.read_input(a.root, a.recvbuf, 0, bytes);
  d.finish(0);
  d.end_in_place();
}

namespace {
// Bytes of each peer's part a reduce_scatter reads per step: all peers'
// pieces together stay within a second-level cache.
constexpr size_t kReducePieceBytes = 256 * 1024;
}  // namespace

void reduce_scatter_cma(Comm &c, const CollArgs &a) {
  int p = c.size(), me = c.rank();
  size_t es = datatype_size(a.datatype), n = a.count;
  Reduction red = reduction_of(a.op, p);
  DirectOp d(c, a, 1, 0, "reduce_scatter");
  // recvbuf overlaps sendbuf only as my own block, which no peer reads.
  d.use_cross_memory(a.sendbuf, size_t(p) * n * es);
  d.begin(0);
  d.post_and_wait(0);
  size_t piece = std::max<size_t>(line_elems(es), kReducePieceBytes / size_t(p - 1) / es);
  piece = std::min(piece, std::max<size_t>(n, 1));
  thread_local std::vector<uint8_t> scratch;
  if (scratch.size() < size_t(p - 1) * piece * es) scratch.resize(size_t(p - 1) * piece * es);
  std::vector<const void *> &srcs = d.arena().sources();
  for (size_t off = 0; off < n; off += piece) {
    size_t len = std::min(piece, n - off), slot = 0;
    // Sources in rank order, as every reduction combines them.
    for (int j = 0; j < p; ++j) {
      if (j == me) {
        srcs[size_t(j)] = at(a.sendbuf, size_t(me) * n + off, es);
        continue;
      }
      uint8_t *into = scratch.data() + slot++ * piece * es;
      d.read_input(j, into, (size_t(me) * n + off) * es, len * es);
      srcs[size_t(j)] = into;
    }
    reduce::reduce(at(a.recvbuf, off, es), srcs.data(), p, len, a.datatype, red.op, red.divisor);
  }
  d.finish(0);
  d.end_in_place();
}

}  // namespace smd
