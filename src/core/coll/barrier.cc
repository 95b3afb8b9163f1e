// barrier: direct (one arena round) and dissemination over messages.
#include "core/coll/algorithms.h"
#include "core/coll/coll_util.h"
#include "core/coll/direct.h"
#include "core/comm/communicator.h"

namespace smd {

void barrier_direct(Comm &c, const CollArgs &a) {
  DirectOp d(c, a, 1, 0, "barrier");
  d.begin(0);
  d.post_and_wait(0);
  d.finish(0);
}

void barrier_rd(Comm &c, const CollArgs &) {
  int p = c.size(), me = c.rank();
  uint64_t seq = c.next_seq();
  uint32_t step = 0;
  char out = 0, in = 0;
  for (int dist = 1; dist < p; dist <<= 1, ++step)
    c.sendrecv((me + dist) % p, &out, 0, (me - dist + p) % p, &in, 0, coll_tag(c.tag_space(), seq, step),
               "barrier");
}

}  // namespace smd
