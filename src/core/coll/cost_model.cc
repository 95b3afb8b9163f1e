#include "core/coll/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "core/comm/communicator.h"
#include "core/util/error.h"
#include "core/util/params.h"

namespace smd {

namespace {

double *field(CostModel &m, const std::string &key) {
  if (key == "arena_alpha_us") return &m.arena.alpha_us;
  if (key == "arena_gbps") return &m.arena.gbps;
  if (key == "local_alpha_us") return &m.local.alpha_us;
  if (key == "local_gbps") return &m.local.gbps;
  if (key == "net_alpha_us") return &m.net.alpha_us;
  if (key == "net_gbps") return &m.net.gbps;
  if (key == "reduce_gbps") return &m.reduce_gbps;
  return nullptr;
}

double log2_ceil(int p) { return p <= 1 ? 0 : std::ceil(std::log2(double(p))); }

}  // namespace

CostModel CostModel::parse(const std::string &text, const std::string &source) {
  CostModel m;
  m.source = source;
  std::istringstream in(text);
  std::string line;
  for (int no = 1; std::getline(in, line); ++no) {
    size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    size_t eq = line.find('=');
    std::string key = line.substr(0, eq == std::string::npos ? line.size() : eq);
    key.erase(0, key.find_first_not_of(" \t"));
    key.erase(key.find_last_not_of(" \t") + 1);
    if (key.empty() && eq == std::string::npos) continue;
    double *f = field(m, key);
    if (eq == std::string::npos || f == nullptr)
      fail(SMD_ERR_INVALID_ARGUMENT,
           "%s line %d: expected 'key = value' with key one of arena_alpha_us, arena_gbps, "
           "local_alpha_us, local_gbps, net_alpha_us, net_gbps, reduce_gbps",
           source.c_str(), no);
    std::string value = line.substr(eq + 1);
    char *end = nullptr;
    double v = std::strtod(value.c_str(), &end);
    while (end && (*end == ' ' || *end == '\t' || *end == '\r')) ++end;
    if (end == value.c_str() || (end && *end != '\0') || !(v >= 0) || std::isinf(v) ||
        (key.find("gbps") != std::string::npos && v <= 0))
      fail(SMD_ERR_INVALID_ARGUMENT, "%s line %d: '%s' is not a valid value for %s", source.c_str(),
           no, value.c_str(), key.c_str());
    *f = v;
  }
  return m;
}

CostModel CostModel::load() {
  std::optional<std::string> path = param_env("SMD_TUNING_FILE");
  if (!path) return CostModel{};
  std::ifstream f(*path);
  if (!f)
    fail(SMD_ERR_INVALID_ARGUMENT, "SMD_TUNING_FILE: cannot read '%s'", path->c_str());
  std::stringstream ss;
  ss << f.rdbuf();
  return parse(ss.str(), "SMD_TUNING_FILE " + *path);
}

std::string CostModel::to_text() const {
  return format(
      "arena_alpha_us = %.3f\narena_gbps = %.3f\nlocal_alpha_us = %.3f\nlocal_gbps = %.3f\n"
      "net_alpha_us = %.3f\nnet_gbps = %.3f\nreduce_gbps = %.3f\n",
      arena.alpha_us, arena.gbps, local.alpha_us, local.gbps, net.alpha_us, net.gbps, reduce_gbps);
}

CommShape shape_of(Comm &c) {
  CommShape s;
  s.size = c.size();
  s.nodes = c.placement().node_count;
  s.arena = c.arena() != nullptr;
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
      return (steps_log + (pow2 ? 0 : 2)) * l.time_us(bytes) + steps_log * reduced(bytes);
    case CollKind::kAllgather:
      if (algo == Algo::kRing) return (p - 1) * l.time_us(bytes);
      return steps_log * l.alpha_us + (p - 1) * bytes / (l.gbps * 1e3) + (pow2 ? 0 : 2 * l.alpha_us);
    case CollKind::kReduceScatter:
      if (algo == Algo::kRing) return (p - 1) * (l.time_us(bytes) + reduced(bytes));
      return steps_log * l.alpha_us + (p - 1) * (bytes / (l.gbps * 1e3) + reduced(bytes)) +
             (pow2 ? 0 : 2 * l.alpha_us);
    case CollKind::kBroadcast:
    case CollKind::kReduce: {
      double r = kind == CollKind::kReduce ? 1 : 0;
      if (algo == Algo::kRing) {
        // Pipelined chain: p-1 hops of latency plus the vector once.
        return (p - 1) * l.alpha_us + l.time_us(bytes) * (1 + (p - 1) * 0.05) + r * reduced(bytes);
      }
      return steps_log * (l.time_us(bytes) + r * reduced(bytes));
    }
    case CollKind::kAlltoall: return (p - 1) * l.time_us(bytes);
    case CollKind::kBarrier: return steps_log * l.alpha_us;
    default: return 0;
  }
}

double best_flat_cost(CollKind kind, int p, double bytes, const LinkCost &link,
                      double reduce_gbps) {
  switch (kind) {
    case CollKind::kBroadcast:
    case CollKind::kReduce:
      return std::min(flat_cost(kind, Algo::kRing, p, bytes, link, reduce_gbps),
                      flat_cost(kind, Algo::kTree, p, bytes, link, reduce_gbps));
    case CollKind::kAlltoall:
    case CollKind::kBarrier: return flat_cost(kind, Algo::kRd, p, bytes, link, reduce_gbps);
    default:
      return std::min(flat_cost(kind, Algo::kRing, p, bytes, link, reduce_gbps),
                      flat_cost(kind, Algo::kRd, p, bytes, link, reduce_gbps));
  }
}

}  // namespace smd
