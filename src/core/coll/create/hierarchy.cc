#include "core/coll/create/hierarchy.h"

#include <cstring>

#include "core/coll/coll_state.h"
#include "core/coll/coll_util.h"
#include "core/coll/select/registry.h"
#include "core/comm/communicator.h"
#include "core/util/dtype.h"
#include "core/util/error.h"
#include "core/util/log.h"

namespace smd {

namespace {

std::shared_ptr<Comm> make_child(Comm &parent, uint32_t id, const std::vector<int> &ranks,
                                 int my_index) {
  std::vector<int> world;
  for (int r : ranks) world.push_back(parent.world_rank(r));
  auto child = std::make_shared<Comm>(parent.ctx_ptr(), id, std::move(world), my_index);
  parent.adopt_child(child);
  child->setup();
  return child;
}

}  // namespace

Hierarchy &hierarchy_of(Comm &c) {
  CollState &st = coll_state(c);
  if (st.hierarchy) return *st.hierarchy;
  auto h = std::make_unique<Hierarchy>();
  const Topology &topo = c.ctx().topology();
  std::vector<int> index_of_node(size_t(topo.node_count), -1);
  for (int r = 0; r < c.size(); ++r) {
    int &k = index_of_node[size_t(topo.node_of[size_t(c.world_rank(r))])];
    if (k < 0) {
      k = static_cast<int>(h->node_ranks.size());
      h->node_ranks.emplace_back();
    }
    h->node_ranks[size_t(k)].push_back(r);
  }
  h->nodes = static_cast<int>(h->node_ranks.size());
  h->node_index = index_of_node[size_t(topo.node_of[size_t(c.world_rank(c.rank()))])];
  const std::vector<int> &mine = h->node_ranks[size_t(h->node_index)];
  for (size_t i = 0; i < mine.size(); ++i)
    if (mine[i] == c.rank()) h->local_rank = static_cast<int>(i);
  h->uniform = st.shape.min_local == st.shape.max_local;
  h->node_major = st.shape.node_major;
  // The rail: the member of every node that has one with my local index.
  std::vector<int> rail;
  int rail_index = 0;
  for (int k = 0; k < h->nodes; ++k) {
    const std::vector<int> &nk = h->node_ranks[size_t(k)];
    if (static_cast<int>(nk.size()) <= h->local_rank) continue;
    if (k == h->node_index) rail_index = static_cast<int>(rail.size());
    rail.push_back(nk[size_t(h->local_rank)]);
  }
  // The ids the communicator reserved when it was formed (kCommIdBlock):
  // agreeing on fresh ones here would race with another communicator's
  // hierarchy forming at the same time on another thread, and two that
  // picked the same id would take each other's setup messages.
  static_assert(kCommIdBlock >= 3);
  if (h->nodes < 2 || st.shape.max_local < 2)
    fail(SMD_ERR_INTERNAL,
         "%s: no hierarchy to form (its node and rail ids are reserved only "
         "for communicators spanning nodes with several members on one)",
         c.where().c_str());
  h->node = make_child(c, c.id() + 1, mine, h->local_rank);
  h->rail = make_child(c, c.id() + 2, rail, rail_index);
  SMD_INFO("coll", "%s: hierarchy of %d node(s), %zu local member(s) here (%s), rail of %zu",
           c.where().c_str(), h->nodes, mine.size(),
           h->node->arena() ? "shared-memory arena" : "no arena", rail.size());
  st.hierarchy = std::move(h);
  return *st.hierarchy;
}

size_t hier_split_unit(int local_size, size_t elem_size) {
  return static_cast<size_t>(local_size) * line_elems(elem_size);
}

uint8_t *Hierarchy::scratch(const MemoryOps &ops, size_t bytes) {
  if (!scratch_ || scratch_ops_ != &ops || scratch_bytes_ < bytes) {
    scratch_.reset();
    scratch_ = std::make_unique<Scratch>(ops, bytes);
    scratch_ops_ = &ops;
    scratch_bytes_ = bytes;
  }
  return scratch_->data();
}

bool hierarchical_applies(const CollArgs &a, const CommShape &s, std::string *why) {
  if (s.nodes < 2) {
    *why = "all members are on one node";
    return false;
  }
  if (s.max_local < 2) {
    *why = "every node has one member (the flat algorithms are the hierarchy)";
    return false;
  }
  if ((a.kind == CollKind::kAllgather || a.kind == CollKind::kReduceScatter) &&
      (s.min_local != s.max_local || !s.node_major)) {
    *why = s.min_local != s.max_local
               ? "nodes have different numbers of members (allgather and reduce_scatter need as "
                 "many on each)"
               : "the members of a node are not consecutive ranks";
    return false;
  }
  return true;
}

double hierarchical_cost(const CollArgs &a, const CommShape &s, const CostModel &m) {
  double bytes = double(a.count) * double(datatype_size(a.datatype));
  int n = s.nodes, L = s.max_local;
  switch (a.kind) {
    case CollKind::kAllreduce:
      if (s.min_local == s.max_local && a.count >= hier_split_unit(L, datatype_size(a.datatype))) {
        // Reduce-scatter and allgather in the node around an allreduce
        // of 1/L of the vector on each rail, all rails at once.
        return 2 * m.arena.time_us(bytes) +
               best_flat_cost(CollKind::kAllreduce, n, bytes / L, m.net, m.reduce_gbps);
      }
      return 2 * m.arena.time_us(bytes) +
             best_flat_cost(CollKind::kAllreduce, n, bytes, m.net, m.reduce_gbps);
    case CollKind::kAllgather:
    case CollKind::kReduceScatter:
      // One rail exchange of blocks, one node step per node.
      return n * m.arena.time_us(bytes * L) +
             best_flat_cost(a.kind, n, bytes, m.net, m.reduce_gbps);
    case CollKind::kBroadcast:
    case CollKind::kReduce:
      return 2 * m.arena.time_us(bytes) + best_flat_cost(a.kind, n, bytes, m.net, m.reduce_gbps) +
             (a.kind == CollKind::kReduce ? m.local.time_us(bytes) : 0);
    case CollKind::kBarrier:
      return 2 * m.arena.alpha_us + best_flat_cost(CollKind::kBarrier, n, 0, m.net, m.reduce_gbps);
    default:
      fail(SMD_ERR_INTERNAL, "the cost model has no formula for %s's hierarchical algorithm",
           coll_name(a.kind));
  }
}

}  // namespace smd
