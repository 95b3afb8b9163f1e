#include "core/coll/select/registry.h"

#include <atomic>
#include <cmath>
#include <mutex>
#include <set>
#include <tuple>

#include <vector>

#include "core/coll/select/row_terms.h"
#include "core/comm/communicator.h"
#include "core/util/dtype.h"
#include "core/util/error.h"
#include "core/util/log.h"

namespace smd {

namespace {

// The row's memory kinds, then its own test.
bool applies(const AlgoEntry &e, const CollArgs &a, const CommShape &s, std::string *why) {
  if (!applies_to(e, a.memory)) {
    *why = std::string("it does not run on ") + memory_ops(a.memory).name + " memory";
    return false;
  }
  return e.applicable(a, s, why);
}

// The row's predicted cost; a row without a cost function is the
// registry's error, not a crash.
double row_cost(const AlgoEntry &e, const CollArgs &a, const CommShape &s, const CostModel &m) {
  if (!e.cost) fail(SMD_ERR_INTERNAL, "%s's %s row has no cost", coll_name(e.kind), e.name);
  return e.cost(a, s, m);
}

// Logs a forced algorithm's fallback once per (collective, algorithm).
void note_fallback(Comm *c, const AlgoEntry &e, const std::string &why) {
  if (!c) return;
  static std::atomic<uint64_t> logged[int(CollKind::kCount)];
  uint64_t bit = uint64_t(1) << int(e.algo);
  if (logged[int(e.kind)].fetch_or(bit) & bit) return;
  SMD_INFO("coll",
           "SMD_ALGO forces %s for %s, which does not apply on %s (%s): choosing "
           "automatically",
           e.name, coll_name(e.kind), c->where().c_str(), why.c_str());
}

// Logs each automatic choice once per (collective, size class, shape).
void note_choice(Comm *c, const CollArgs &a, const AlgoChoice &ch) {
  if (!c || !log_enabled(LogLevel::kInfo, "coll")) return;
  static std::mutex mu;
  static std::set<std::tuple<int, int, int, int>> seen;
  double bytes = cost_bytes(a);
  int size_class = bytes < 1 ? 0 : int(std::log2(bytes) / 4);  // x16 steps
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!seen.insert({int(a.kind), size_class, c->size(), c->placement().node_count}).second)
      return;
  }
  SMD_INFO("coll", "%s of %.0f bytes on %s: %s (predicted %.1f us)", coll_name(a.kind), bytes,
           c->where().c_str(), ch.entry->name, ch.cost_us);
}

}  // namespace

std::span<const AlgoEntry> algo_rows() {
  static const std::vector<AlgoEntry> rows = [] {
    std::vector<AlgoEntry> all;
    for (std::span<const AlgoEntry> part :
         {allreduce_rows(), allgather_rows(), reduce_scatter_rows(), broadcast_rows(),
          reduce_rows(), alltoall_rows(), barrier_rows(), allgatherv_rows(), reduce_scatterv_rows(),
          alltoallv_rows()})
      all.insert(all.end(), part.begin(), part.end());
    return all;
  }();
  return rows;
}

const AlgoEntry *find_algo(CollKind kind, Algo algo) {
  for (const AlgoEntry &e : algo_rows())
    if (e.kind == kind && e.algo == algo) return &e;
  return nullptr;
}

double flat_cost(CollKind kind, Algo algo, int p, double bytes, const LinkCost &link,
                 double reduce_gbps) {
  const AlgoEntry *e = find_algo(kind, algo);
  if (!e || !e->link_formula)
    fail(SMD_ERR_INTERNAL, "%s has no point-to-point %s algorithm", coll_name(kind),
         algo_name(algo));
  return over_links(e->link_formula, p, bytes, link, reduce_gbps);
}

double best_flat_cost(CollKind kind, int p, double bytes, const LinkCost &link,
                      double reduce_gbps) {
  double best = 0;
  bool any = false;
  for (const AlgoEntry &e : algo_rows()) {
    if (e.kind != kind || !e.link_formula) continue;
    double cost = over_links(e.link_formula, p, bytes, link, reduce_gbps);
    if (!any || cost < best) best = cost;
    any = true;
  }
  if (!any) fail(SMD_ERR_INTERNAL, "%s has no point-to-point algorithm", coll_name(kind));
  return best;
}

bool algo_supported(CollKind k, Algo a) { return a == Algo::kAuto || find_algo(k, a) != nullptr; }

AlgoChoice choose(const CollArgs &a, Algo forced, const CommShape &s, const CostModel &m, Comm *c) {
  std::string why;
  if (forced != Algo::kAuto) {
    const AlgoEntry *e = find_algo(a.kind, forced);
    if (e && applies(*e, a, s, &why)) return {e, row_cost(*e, a, s, m)};
    if (e) note_fallback(c, *e, why);
  }
  AlgoChoice best;
  for (const AlgoEntry &e : algo_rows()) {
    if (e.kind != a.kind || !applies(e, a, s, &why)) continue;
    double cost = row_cost(e, a, s, m);
    if (!best.entry || cost < best.cost_us) best = {&e, cost};
  }
  note_choice(c, a, best);
  return best;
}

}  // namespace smd
