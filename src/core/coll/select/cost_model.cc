#include "core/coll/select/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "core/coll/select/registry.h"
#include "core/coll/select/row_terms.h"
#include "core/comm/arena.h"
#include "core/comm/communicator.h"
#include "core/util/error.h"
#include "core/util/params.h"

namespace smd {

namespace {

double log2_ceil(int p) { return p <= 1 ? 0 : std::ceil(std::log2(double(p))); }

}  // namespace

CommShape shape_of(Comm &c) {
  CommShape s;
  s.size = c.size();
  s.nodes = c.placement().node_count;
  s.arena = c.arena() != nullptr;
  s.cma = s.arena && c.arena()->cross_memory();
  const Topology &topo = c.ctx().topology();
  std::vector<int> per_node(size_t(topo.node_count), 0);
  int prev_node = -1;
  std::vector<bool> left(size_t(topo.node_count), false);  // node's run of ranks ended
  for (int w : c.members()) {
    int node = topo.node_of[size_t(w)];
    ++per_node[size_t(node)];
    if (node != prev_node) {
      if (prev_node >= 0) left[size_t(prev_node)] = true;
      if (left[size_t(node)]) s.node_major = false;
      prev_node = node;
    }
  }
  s.max_local = 0;
  s.min_local = s.size;
  for (int k : per_node) {
    if (k == 0) continue;
    if (k > s.max_local) s.max_local = k;
    if (k < s.min_local) s.min_local = k;
  }
  return s;
}

double flat_cost(CollKind kind, Algo algo, int p, double bytes, const LinkCost &l,
                 double reduce_gbps) {
  if (p <= 1) return 0;
  double steps_log = log2_ceil(p);
  bool pow2 = (p & (p - 1)) == 0;
  auto reduced = [&](double out_bytes) { return out_bytes / (reduce_gbps * 1e3); };
  // bytes: the vector (allreduce, broadcast, reduce), one rank's block
  // (allgather, reduce_scatter, alltoall).
  switch (kind) {
    case CollKind::kAllreduce:
      if (algo == Algo::kRing)
        return 2 * (p - 1) * l.time_us(bytes / p) + reduced(bytes * (p - 1) / p);
      // rd: log p exchanges and reductions of the whole vector (+2 steps
      // for the folded ranks).
      if (algo == Algo::kRd)
        return (steps_log + (pow2 ? 0 : 2)) * l.time_us(bytes) + steps_log * reduced(bytes);
      break;
    case CollKind::kAllgather:
      if (algo == Algo::kRing) return (p - 1) * l.time_us(bytes);
      if (algo == Algo::kRd)
        return steps_log * l.alpha_us + (p - 1) * bytes / (l.gbps * 1e3) +
               (pow2 ? 0 : 2 * l.alpha_us);
      break;
    case CollKind::kReduceScatter:
      if (algo == Algo::kRing) return (p - 1) * (l.time_us(bytes) + reduced(bytes));
      if (algo == Algo::kRd)
        return steps_log * l.alpha_us + (p - 1) * (bytes / (l.gbps * 1e3) + reduced(bytes)) +
               (pow2 ? 0 : 2 * l.alpha_us);
      break;
    case CollKind::kBroadcast:
    case CollKind::kReduce: {
      double r = kind == CollKind::kReduce ? 1 : 0;
      if (algo == Algo::kRing) {
        // Pipelined chain: p-1 hops of latency plus the vector once.
        return (p - 1) * l.alpha_us + l.time_us(bytes) * (1 + (p - 1) * 0.05) + r * reduced(bytes);
      }
      if (algo == Algo::kTree) return steps_log * (l.time_us(bytes) + r * reduced(bytes));
      break;
    }
    case CollKind::kAlltoall:
      if (algo == Algo::kPairwise) return (p - 1) * l.time_us(bytes);
      break;
    case CollKind::kBarrier:
      if (algo == Algo::kRd) return steps_log * l.alpha_us;
      break;
    default: break;
  }
  // A new algorithm must bring its own formula, not borrow a neighbour's.
  fail(SMD_ERR_INTERNAL, "the cost model has no formula for %s's %s algorithm", coll_name(kind),
       algo_name(algo));
}

double best_flat_cost(CollKind kind, int p, double bytes, const LinkCost &link,
                      double reduce_gbps) {
  // The point-to-point rows are those that apply anywhere.
  double best = 0;
  bool any = false;
  for (const AlgoEntry &e : algo_rows()) {
    if (e.kind != kind || e.applicable != anywhere) continue;
    double cost = flat_cost(kind, e.algo, p, bytes, link, reduce_gbps);
    if (!any || cost < best) best = cost;
    any = true;
  }
  if (!any) fail(SMD_ERR_INTERNAL, "%s has no point-to-point algorithm", coll_name(kind));
  return best;
}

}  // namespace smd
