// barrier: direct (one arena round: the tiny path with nothing to
// publish) and dissemination over messages.
#include "core/coll/algorithms/algorithms.h"
#include "core/coll/create/hierarchy.h"
#include "core/coll/select/registry.h"
#include "core/coll/select/row_terms.h"
#include "core/coll/coll_util.h"
#include "core/coll/algorithms/tiny.h"
#include "core/comm/communicator.h"

namespace smd {

// Each member writes its descriptor line and reads every peer's: the
// descriptors are compared as in every direct call, so a member that called
// another collective (or another number of them) fails with the others.
void barrier_direct(Comm &c, const CollArgs &a) { run_tiny(c, a); }

void barrier_rd(Comm &c, const CollArgs &) {
  int p = c.size(), me = c.rank();
  uint64_t seq = c.next_seq();
  uint32_t step = 0;
  char out = 0, in = 0;
  for (int dist = 1; dist < p; dist <<= 1, ++step)
    c.sendrecv((me + dist) % p, &out, 0, (me - dist + p) % p, &in, 0,
               coll_tag(c.tag_space(), seq, step), "barrier");
}

namespace {
// rd: log p empty messages.
double barrier_rd_cost(int p, double /*bytes*/, const LinkCost &l, double /*reduce_gbps*/) {
  return log2_rounds(p) * l.alpha_us;
}
// This collective's rows of the registry, in the order the automatic
// choice compares them (the first of equal costs wins).
const AlgoEntry kRows[] = {
    direct_row(CollKind::kBarrier, barrier_direct),
    hierarchical_row(CollKind::kBarrier, barrier_hierarchical),
    p2p_row<barrier_rd_cost>(CollKind::kBarrier, Algo::kRd, "rd", barrier_rd),
};
}  // namespace

std::span<const AlgoEntry> barrier_rows() { return kRows; }

}  // namespace smd
