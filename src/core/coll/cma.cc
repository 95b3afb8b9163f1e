// The cma algorithms: single-copy collectives among a node's ranks for
// any host buffers. Each member posts where its input lies (its address
// and, known from the arena's setup, its pid) in the operation's
// descriptor, and every reader copies each peer's block straight out of
// that peer's buffer with one cross-memory read: no staging, so each byte
// crosses memory once instead of twice. A member returns only once every
// reader has marked the round consumed, since its buffer is read in place.
// Memory from smd_mem_alloc is mapped and copied instead (DirectOp).
#include "core/coll/algorithms.h"
#include "core/coll/coll_util.h"
#include "core/coll/direct.h"
#include "core/coll/stream_copy.h"
#include "core/comm/communicator.h"

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

}  // namespace smd
