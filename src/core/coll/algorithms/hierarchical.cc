// Hierarchical collectives for communicators that span nodes: phases on
// the node's members (the shared-memory arena) and on rails across nodes
// (the network), so that only the minimum crosses nodes and every local
// rank drives its own network traffic at once. Each phase is an ordinary
// collective on a sub-communicator (hierarchy.h), which picks its own
// algorithm.
#include <algorithm>
#include <memory>
#include <vector>

#include "core/coll/algorithms/algorithms.h"
#include "core/coll/coll_state.h"
#include "core/coll/coll_util.h"
#include "core/coll/create/hierarchy.h"
#include "core/comm/communicator.h"
#include "core/reduce/reduce.h"

namespace smd {

namespace {

// One phase: a collective on a sub-communicator, of the caller's datatype
// and memory kind.
void run_on(Comm &sub, const CollArgs &like, CollKind kind, const void *send, void *recv,
            size_t count, smd_op_t op = SMD_SUM, int root = 0) {
  CollArgs a{kind, send, recv, count, like.datatype, op, root, like.memory, true};
  run_collective(sub, a);
}

// Reduce to each node's first member, allreduce among those (rail 0 is
// the node leaders), broadcast in the node: for any layout, and for
// vectors too short to split over the node's members.
void allreduce_by_leaders(Hierarchy &h, const CollArgs &a, const void *send, void *recv,
                          size_t count, Reduction red) {
  run_on(*h.node, a, CollKind::kReduce, send, recv, count, red.op, 0);
  if (h.local_rank == 0) {
    run_on(*h.rail, a, CollKind::kAllreduce, recv, recv, count, red.op);
    if (red.divisor > 1) ops_of(a).divide(recv, count, a.datatype, red.divisor);
  }
  run_on(*h.node, a, CollKind::kBroadcast, recv, recv, count, SMD_SUM, 0);
}

// Where a communicator rank sits in the hierarchy.
struct Place {
  int node = 0, local = 0;
};
Place place_of(const Hierarchy &h, int rank) {
  for (int k = 0; k < h.nodes; ++k) {
    const std::vector<int> &nk = h.node_ranks[size_t(k)];
    for (size_t i = 0; i < nk.size(); ++i)
      if (nk[i] == rank) return {k, static_cast<int>(i)};
  }
  return {};
}

}  // namespace

// With as many members L on every node: reduce-scatter in the node (each
// member gets the node's sum of its 1/L slice), allreduce of that slice
// with the members of the same local index on the other nodes (every
// rail at once: each rank sends 2(n-1)/n of S/L across nodes), allgather
// in the node. Vectors of several SMD_HIER_CHUNK_BYTES go in chunks whose
// rail phase runs on the rail communicator's worker thread while this
// thread does the node phases of the chunks before and after it, so the
// network and the node's memory work at once. Elements left over by the
// split into L slices go the leaders' way.
void allreduce_hierarchical(Comm &c, const CollArgs &a) {
  Hierarchy &h = hierarchy_of(c);
  size_t es = datatype_size(a.datatype), n = a.count;
  Reduction red = reduction_of(a.op, c.size());
  size_t local = static_cast<size_t>(h.node->size());
  // Chunks are a whole number of cache lines per member.
  size_t unit = hier_split_unit(static_cast<int>(local), es);
  size_t whole = h.uniform ? n / unit * unit : 0;
  if (whole == 0) return allreduce_by_leaders(h, a, a.sendbuf, a.recvbuf, n, red);
  size_t chunk_bytes = static_cast<size_t>(coll_state(c).hier_chunk_bytes);
  size_t chunks = chunk_bytes == 0 ? 1 : std::max<size_t>(1, whole * es / chunk_bytes);
  chunks = std::min({chunks, whole / unit, size_t(64)});
  size_t per_chunk = (whole / unit + chunks - 1) / chunks * unit;
  struct Piece {
    size_t off = 0, q = 0;  // the chunk's first element, its slice length
    uint8_t *slice = nullptr;
    std::shared_ptr<Task> rail;
  };
  std::vector<Piece> pieces;
  for (size_t off = 0; off < whole; off += per_chunk) {
    Piece p;
    p.off = off;
    p.q = std::min(per_chunk, whole - off) / local;
    p.slice = at(a.recvbuf, off + size_t(h.local_rank) * p.q, es);
    pieces.push_back(p);
  }
  Comm &rail = *h.rail;
  auto rail_phase = [&rail, &a, red](Piece *p) {
    run_on(rail, a, CollKind::kAllreduce, p->slice, p->slice, p->q, red.op);
    if (red.divisor > 1) ops_of(a).divide(p->slice, p->q, a.datatype, red.divisor);
  };
  // Whatever happens, no rail task may outlive this call (it writes the
  // caller's buffer).
  struct Drain {
    std::vector<Piece> &pieces;
    ~Drain() {
      for (Piece &p : pieces)
        if (p.rail) p.rail->wait_until(Deadline::never());
    }
  } drain{pieces};
  auto finish = [&](Piece &p) {
    if (p.rail) {
      p.rail->wait_until(Deadline::never());
      if (p.rail->result() != SMD_SUCCESS) throw Error(p.rail->result(), p.rail->error());
    }
    run_on(*h.node, a, CollKind::kAllgather, p.slice, at(a.recvbuf, p.off, es), p.q);
  };
  for (size_t k = 0; k < pieces.size(); ++k) {
    Piece &p = pieces[k];
    run_on(*h.node, a, CollKind::kReduceScatter, at(a.sendbuf, p.off, es), p.slice, p.q, red.op);
    if (pieces.size() == 1) {
      rail_phase(&p);
    } else {
      Piece *pp = &p;
      p.rail = rail.executor().submit([rail_phase, pp] { rail_phase(pp); });
    }
    if (k > 0) finish(pieces[k - 1]);
  }
  finish(pieces.back());
  if (whole < n)
    allreduce_by_leaders(h, a, at(a.sendbuf, whole, es), at(a.recvbuf, whole, es), n - whole, red);
}

// Rail first: each rank gathers the blocks of its local index from every
// node (n-1 blocks cross nodes, the minimum), then one allgather per node
// inside the node puts that node's blocks in place.
void allgather_hierarchical(Comm &c, const CollArgs &a) {
  Hierarchy &h = hierarchy_of(c);
  size_t bytes = a.count * datatype_size(a.datatype);
  uint8_t *blocks = h.scratch(ops_of(a), bytes * size_t(h.nodes));
  run_on(*h.rail, a, CollKind::kAllgather, a.sendbuf, blocks, a.count);
  for (int k = 0; k < h.nodes; ++k) {
    uint8_t *dst = static_cast<uint8_t *>(a.recvbuf) + size_t(h.node_ranks[size_t(k)][0]) * bytes;
    run_on(*h.node, a, CollKind::kAllgather, blocks + size_t(k) * bytes, dst, a.count);
  }
}

// The mirror of allgather: one reduce-scatter per node inside the node
// (each member gets its node's partial sum of its local index's block of
// every node), then a reduce-scatter of those n blocks along the rail.
void reduce_scatter_hierarchical(Comm &c, const CollArgs &a) {
  Hierarchy &h = hierarchy_of(c);
  size_t bytes = a.count * datatype_size(a.datatype);
  Reduction red = reduction_of(a.op, c.size());
  uint8_t *blocks = h.scratch(ops_of(a), bytes * size_t(h.nodes));
  for (int k = 0; k < h.nodes; ++k) {
    const uint8_t *src =
        static_cast<const uint8_t *>(a.sendbuf) + size_t(h.node_ranks[size_t(k)][0]) * bytes;
    run_on(*h.node, a, CollKind::kReduceScatter, src, blocks + size_t(k) * bytes, a.count, red.op);
  }
  run_on(*h.rail, a, CollKind::kReduceScatter, blocks, a.recvbuf, a.count, red.op);
  if (red.divisor > 1) ops_of(a).divide(a.recvbuf, a.count, a.datatype, red.divisor);
}

// In the root's node, then among the node leaders, then in the other nodes.
void broadcast_hierarchical(Comm &c, const CollArgs &a) {
  Hierarchy &h = hierarchy_of(c);
  Place root = place_of(h, a.root);
  bool root_node = h.node_index == root.node;
  if (root_node)
    run_on(*h.node, a, CollKind::kBroadcast, a.sendbuf, a.recvbuf, a.count, SMD_SUM, root.local);
  if (h.local_rank == 0)
    run_on(*h.rail, a, CollKind::kBroadcast, a.recvbuf, a.recvbuf, a.count, SMD_SUM, root.node);
  if (!root_node)
    run_on(*h.node, a, CollKind::kBroadcast, a.recvbuf, a.recvbuf, a.count, SMD_SUM, 0);
}

// Each node reduces to its leader, the leaders reduce to the root node's
// leader, which hands the result to the root if that is another member.
void reduce_hierarchical(Comm &c, const CollArgs &a) {
  Hierarchy &h = hierarchy_of(c);
  size_t bytes = a.count * datatype_size(a.datatype);
  Reduction red = reduction_of(a.op, c.size());
  Place root = place_of(h, a.root);
  bool root_node = h.node_index == root.node;
  bool is_root = c.rank() == a.root;
  uint8_t *partial = is_root ? static_cast<uint8_t *>(a.recvbuf) : h.scratch(ops_of(a), bytes);
  run_on(*h.node, a, CollKind::kReduce, a.sendbuf, partial, a.count, red.op, 0);
  if (h.local_rank == 0)
    run_on(*h.rail, a, CollKind::kReduce, partial, partial, a.count, red.op, root.node);
  if (root_node && root.local != 0) {
    // Every member of the root's node advances the node's sequence, so
    // their later collectives keep agreeing on tags.
    uint64_t tag = coll_tag(h.node->tag_space(), h.node->next_seq(), 0);
    if (h.local_rank == 0) {
      P2PReq s = h.node->isend(root.local, partial, bytes, tag);
      h.node->wait(s, "reduce");
    } else if (is_root) {
      P2PReq r = h.node->irecv(0, a.recvbuf, bytes, tag);
      h.node->wait(r, "reduce");
    }
  }
  if (is_root && red.divisor > 1) ops_of(a).divide(a.recvbuf, a.count, a.datatype, red.divisor);
}

void barrier_hierarchical(Comm &c, const CollArgs &a) {
  Hierarchy &h = hierarchy_of(c);
  run_on(*h.node, a, CollKind::kBarrier, nullptr, nullptr, 0);
  if (h.local_rank == 0) run_on(*h.rail, a, CollKind::kBarrier, nullptr, nullptr, 0);
  run_on(*h.node, a, CollKind::kBarrier, nullptr, nullptr, 0);
}

}  // namespace smd
