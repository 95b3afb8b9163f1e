#include "cluster.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace smdsim {

namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string &what) { throw std::runtime_error(what); }

std::string shortest(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

double number(const json &j, const char *key, double lo, double hi, const std::string &where) {
  if (!j.contains(key)) bad(where + "." + key + " is missing");
  const json &v = j.at(key);
  if (!v.is_number()) bad(where + "." + key + " must be a number");
  double d = v.get<double>();
  if (!(d >= lo && d <= hi))
    bad(where + "." + key + " = " + v.dump() + " is outside [" + shortest(lo) + ", " +
        shortest(hi) + "]");
  return d;
}

double number_or(const json &j, const char *key, double fallback, double lo, double hi,
                 const std::string &where) {
  return j.contains(key) ? number(j, key, lo, hi, where) : fallback;
}

int integer(const json &j, const char *key, int lo, int hi, const std::string &where) {
  if (j.contains(key) && !j.at(key).is_number_integer())
    bad(where + "." + key + " must be a whole number");
  return int(number(j, key, lo, hi, where));
}

int integer_or(const json &j, const char *key, int fallback, int lo, int hi,
               const std::string &where) {
  return j.contains(key) ? integer(j, key, lo, hi, where) : fallback;
}

bool boolean_or(const json &j, const char *key, bool fallback, const std::string &where) {
  if (!j.contains(key)) return fallback;
  if (!j.at(key).is_boolean()) bad(where + "." + key + " must be true or false");
  return j.at(key).get<bool>();
}

const json &object(const json &j, const char *key, const std::string &where) {
  if (!j.contains(key) || !j.at(key).is_object()) bad(where + "." + key + " must be an object");
  return j.at(key);
}

LinkParams link(const json &j, const char *gbps_key, const std::string &where) {
  return {number(j, "latency_us", 0, 1e6, where), number(j, gbps_key, 1e-3, 1e6, where)};
}

Workload workload(const json &j, const std::string &where) {
  if (!j.is_object()) bad(where + " must be an object");
  Workload w;
  if (!j.contains("name") || !j.at("name").is_string()) bad(where + ".name must be a string");
  w.name = j.at("name").get<std::string>();
  if (!j.contains("mode") || !j.at("mode").is_string()) bad(where + ".mode must be a string");
  w.mode = j.at("mode").get<std::string>();
  if (w.mode != "data_parallel" && w.mode != "sharded")
    bad(where + ".mode must be \"data_parallel\" or \"sharded\"");
  w.parameters = number(j, "parameters", 1, 1e14, where);
  w.element_bytes = integer_or(j, "element_bytes", 2, 1, 8, where);
  if (w.element_bytes != 1 && w.element_bytes != 2 && w.element_bytes != 4 && w.element_bytes != 8)
    bad(where + ".element_bytes must be 1, 2, 4 or 8");
  w.bucket_bytes = number_or(j, "bucket_bytes", 25e6, 1, 1e13, where);
  w.compute_ms = number(j, "compute_ms", 0, 1e9, where);
  w.backward_fraction = number_or(j, "backward_fraction", 2.0 / 3.0, 0, 1, where);
  return w;
}

}  // namespace

EngineLinks Cluster::engine_links() const {
  EngineLinks l;
  l.local = intra_node;
  l.arena = arena.gbytes_per_s > 0 ? arena : intra_node;
  l.cma = intra_node;
  double share = inter_rail.gbytes_per_s * rails / std::max(ranks_per_node, rails);
  l.net = {inter_rail.latency_us, std::min(share, inter_rail.gbytes_per_s)};
  l.reduce_gbytes_per_s = reduce_gbytes_per_s;
  return l;
}

EngineShape Cluster::shape(int node_count) const {
  EngineShape s;
  s.nodes = node_count;
  s.ranks_per_node = ranks_per_node;
  s.device_memory = device_memory;
  s.cma = cma;
  return s;
}

Cluster parse_cluster(const std::string &text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception &e) {
    bad(std::string("the cluster description is not JSON: ") + e.what());
  }
  if (!j.is_object()) bad("the cluster description must be a JSON object");
  Cluster c;
  if (j.contains("name") && j.at("name").is_string()) c.name = j.at("name").get<std::string>();
  c.ranks_per_node = integer(j, "ranks_per_node", 1, 1024, "cluster");
  if (!j.contains("nodes") || !j.at("nodes").is_array() || j.at("nodes").empty())
    bad("cluster.nodes must be a non-empty array of node counts");
  c.nodes.clear();
  for (const json &n : j.at("nodes")) {
    if (!n.is_number_integer() || n.get<long long>() < 1 || n.get<long long>() > 65536)
      bad("cluster.nodes: every entry must be an integer node count from 1 to 65536");
    c.nodes.push_back(n.get<int>());
  }
  c.device_memory = boolean_or(j, "device_memory", false, "cluster");
  c.cma = boolean_or(j, "cma", false, "cluster");
  c.intra_node = link(object(j, "intra_node", "cluster"), "gbytes_per_s", "cluster.intra_node");
  if (j.contains("arena"))
    c.arena = link(object(j, "arena", "cluster"), "gbytes_per_s", "cluster.arena");
  const json &inter = object(j, "inter_node", "cluster");
  c.inter_rail = link(inter, "gbytes_per_s_per_rail", "cluster.inter_node");
  c.rails = integer_or(inter, "rails", 1, 1, 64, "cluster.inter_node");
  c.reduce_gbytes_per_s = number(j, "reduce_gbytes_per_s", 1e-3, 1e6, "cluster");
  if (j.contains("sources")) {
    if (!j.at("sources").is_array()) bad("cluster.sources must be an array of strings");
    for (const json &s : j.at("sources")) {
      if (!s.is_string()) bad("cluster.sources must be an array of strings");
      c.sources.push_back(s.get<std::string>());
    }
  }
  if (j.contains("workloads")) {
    if (!j.at("workloads").is_array()) bad("cluster.workloads must be an array");
    int i = 0;
    for (const json &w : j.at("workloads"))
      c.workloads.push_back(workload(w, "cluster.workloads[" + std::to_string(i++) + "]"));
  }
  return c;
}

Cluster read_cluster(const std::string &path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot read the cluster description " + path);
  std::ostringstream text;
  text << f.rdbuf();
  return parse_cluster(text.str());
}

}  // namespace smdsim
