// allreduce "herring": the push/pull parameter-server schedule of
// SageMaker's data-parallel library (Herring, SC'21; BytePS is the open
// design of the same idea), for communicators with one member per node:
// the inter-node phase of the hierarchical allreduce, whose rail has one
// member per node. The vector is cut into p balanced partitions; member i
// is the server of partition i and runs it as part of its own call (no
// separate server process). Every member pushes its piece of each
// partition to that partition's server, each server sums the p pieces of
// its partition and every member pulls the sums back: each byte crosses
// the network once each way, in two steps instead of the ring's 2(p-1),
// at the price of p-1 senders converging on every server at once.
#include <vector>

#include "core/coll/algorithms/algorithms.h"
#include "core/coll/algorithms/blocks/ring.h"
#include "core/coll/coll_util.h"
#include "core/coll/select/row_terms.h"
#include "core/comm/communicator.h"
#include "core/reduce/reduce.h"

namespace smd {

void allreduce_herring(Comm &c, const CollArgs &a) {
  int p = c.size(), me = c.rank();
  size_t es = datatype_size(a.datatype);
  Reduction red = reduction_of(a.op, p);
  const MemoryOps &m = ops_of(a);
  m.copy(a.recvbuf, a.sendbuf, a.count * es);
  uint64_t seq = c.next_seq();
  std::vector<Range> parts = even_segments(a.count, p);
  Range mine = parts[size_t(me)];
  // Push: my piece of every other partition to its server; the pieces of
  // mine from every other member into scratch, one slot per member.
  Scratch pieces(m, mine.len * es * size_t(p));
  // Declared after the scratch: on an error it cancels what is still in
  // flight before the scratch goes.
  ReqSet reqs(c);
  std::vector<P2PReq *> arrival(size_t(p), nullptr);
  uint64_t push = coll_tag(c.tag_space(), seq, 0);
  auto slot = [&](int j) { return pieces.data() + size_t(j) * mine.len * es; };
  for (int j = 0; j < p; ++j) {
    if (j == me) continue;
    if (mine.len) arrival[size_t(j)] = &reqs.add(c.irecv(j, slot(j), mine.len * es, push));
    Range r = parts[size_t(j)];
    if (r.len) reqs.add(c.isend(j, at(a.recvbuf, r.off, es), r.len * es, push));
  }
  // Serve: the sum of my partition in member order, into slot 0, each
  // piece summed as soon as it is in while the later ones still arrive.
  uint8_t *sum = at(a.recvbuf, mine.off, es);
  if (mine.len) {
    m.copy(slot(me), sum, mine.len * es);
    for (int j = 0; j < p; ++j) {
      if (arrival[size_t(j)]) c.wait(*arrival[size_t(j)], "allreduce");
      if (j > 0) m.reduce2(slot(0), slot(0), slot(j), mine.len, a.datatype, red.op);
    }
    m.copy(sum, slot(0), mine.len * es);
    if (red.divisor > 1) m.divide(sum, mine.len, a.datatype, red.divisor);
  }
  reqs.wait_all("allreduce");
  reqs.clear();
  // Pull: my partition's sum to every member, every other partition's from its server.
  uint64_t pull = coll_tag(c.tag_space(), seq, 1);
  for (int j = 0; j < p; ++j) {
    if (j == me) continue;
    Range r = parts[size_t(j)];
    if (r.len) reqs.add(c.irecv(j, at(a.recvbuf, r.off, es), r.len * es, pull));
    if (mine.len) reqs.add(c.isend(j, sum, mine.len * es, pull));
  }
  reqs.wait_all("allreduce");
}

// One member per node: the rail of a hierarchy, or a world of single-rank
// nodes. Where a node has several members the hierarchical allreduce
// runs this between nodes, and its node phases inside them.
bool herring_applies(const CollArgs &, const CommShape &s, std::string *why) {
  if (s.max_local > 1)
    *why = "a node has several members (the hierarchical allreduce runs herring between nodes)";
  return s.max_local <= 1;
}

// Two steps (push, pull), each with (p-1)/p of the vector through every
// member's link, as much as the ring's 2(p-1) steps move. The p-1 messages
// of a step are in flight at once, so their latencies overlap, but p-1
// senders converge on each server (incast): its link's bandwidth is shared
// by them (already the (p-1)/p term) and it drains their arrivals as a
// fan-in, charged as one alpha per doubling of the senders. Many flows
// converging on one link also drain more slowly than one (TCP incast: the
// flows' windows collide in the switch's queue), so the bandwidth term
// grows with the senders, by kIncastPerSender each, fitted to the push
// and pull measured against the ring on netns nodes (docs/SCALE.md,
// "Herring between nodes"), where the ring moves the same bytes one flow
// per link. The server reduces (p-1)/p of the vector, as the ring does.
constexpr double kIncastPerSender = 0.03;

double allreduce_herring_cost(int p, double bytes, const LinkCost &l, double reduce_gbps) {
  const double incast = 1 + kIncastPerSender * (p - 1);
  double step = log2_rounds(p) * l.alpha_us + incast * (p - 1) * (bytes / p) / (l.gbps * 1e3);
  return 2 * step + reduce_us(bytes * (p - 1) / p, reduce_gbps);
}

}  // namespace smd
