#include "core/comm/topology.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "core/comm/cpu_binding.h"
#include "core/comm/record_cache.h"
#include "core/util/byte_codec.h"
#include "core/util/error.h"
#include "core/util/params.h"

namespace smd {
namespace {

std::string boot_id() {
  char buf[64] = {0};
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
  if (!f) return "";
  if (!fgets(buf, sizeof buf, f)) buf[0] = 0;
  fclose(f);
  std::string s = buf;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

Bytes encode_rank_record(const RankRecord &r) {
  Bytes b;
  ByteWriter w(b);
  w.blob(r.host).blob(r.node_key);
  w.u32(static_cast<uint32_t>(r.pid)).u32(static_cast<uint32_t>(r.cpus));
  w.u32(static_cast<uint32_t>(r.numa_node));
  w.blob(r.cpuset).blob(r.machine_key);
  return b;
}

RankRecord decode_rank_record(const Bytes &b) {
  ByteReader rd(b, "rank record");
  RankRecord r;
  r.host = rd.text("host");
  r.node_key = rd.text("node key");
  r.pid = static_cast<int32_t>(rd.u32("pid"));
  r.cpus = static_cast<int32_t>(rd.u32("cpus"));
  if (rd.done()) return r;
  r.numa_node = static_cast<int32_t>(rd.u32("numa node"));
  r.cpuset = rd.text("cpuset");
  r.machine_key = rd.done() ? r.node_key : rd.text("machine key");
  return r;
}

RankRecord local_rank_record(int world_rank) {
  RankRecord r;
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  r.host = host;
  r.machine_key = r.host + "/" + boot_id();
  if (auto id = param_env("SMD_NODE_ID")) r.node_key = "id:" + *id;
  else r.node_key = r.machine_key;
  // Fake nodes of consecutive ranks: the one setting that gives rank
  // threads of one process (which share its environment) several nodes.
  int64_t per_node = param_int("SMD_RANKS_PER_NODE");
  if (per_node < 0)
    fail(SMD_ERR_INVALID_ARGUMENT, "SMD_RANKS_PER_NODE=%lld: expected 0 (off) or a rank count",
         static_cast<long long>(per_node));
  if (per_node > 0)
    r.node_key += format("/split%lld", static_cast<long long>(world_rank / per_node));
  r.pid = getpid();
  CpuBinding cpu = measure_cpu_binding();
  r.cpus = cpu.cpus;
  r.numa_node = cpu.numa_node;
  r.cpuset = cpu.cpuset;
  return r;
}

std::vector<int> Topology::machine_members(int rank) const {
  std::vector<int> same;
  const std::string &key = ranks[static_cast<size_t>(rank)].machine_key;
  for (size_t r = 0; r < ranks.size(); ++r)
    if (ranks[r].machine_key == key) same.push_back(static_cast<int>(r));
  return same;
}

int Topology::cpus_of_node(int node) const {
  return cpus_of(node_members[static_cast<size_t>(node)]);
}

int Topology::cpus_of(const std::vector<int> &members) const {
  std::set<int> all;
  int widest = 1;
  bool known = true;
  for (int r : members) {
    const RankRecord &rec = ranks[static_cast<size_t>(r)];
    widest = std::max(widest, rec.cpus);
    std::vector<int> cpus;
    if (known && parse_cpu_list(rec.cpuset, &cpus)) all.insert(cpus.begin(), cpus.end());
    else known = false;
  }
  return known ? std::max(widest, static_cast<int>(all.size())) : widest;
}

Topology Topology::compute(std::vector<RankRecord> ranks) {
  Topology t;
  t.ranks = std::move(ranks);
  int n = static_cast<int>(t.ranks.size());
  t.node_of.assign(n, 0);
  t.local_rank_of.assign(n, 0);
  std::map<std::string, int> index;
  for (int r = 0; r < n; ++r) {
    auto [it, added] = index.emplace(t.ranks[r].node_key, static_cast<int>(t.node_members.size()));
    if (added) t.node_members.emplace_back();
    int node = it->second;
    t.node_of[r] = node;
    t.local_rank_of[r] = static_cast<int>(t.node_members[node].size());
    t.node_members[node].push_back(r);
  }
  t.node_count = static_cast<int>(t.node_members.size());
  std::map<std::string, int> machines;
  std::vector<std::vector<int>> machine_members;
  t.machine_of.assign(n, 0);
  for (int r = 0; r < n; ++r) {
    auto [it, added] =
        machines.emplace(t.ranks[r].machine_key, static_cast<int>(machine_members.size()));
    if (added) machine_members.emplace_back();
    t.machine_of[r] = it->second;
    machine_members[it->second].push_back(r);
  }
  for (const auto &m : machine_members) {
    t.machine_size.push_back(static_cast<int>(m.size()));
    t.machine_cpus.push_back(t.cpus_of(m));
  }
  return t;
}

std::shared_ptr<const Topology> Topology::shared(const std::vector<Bytes> &records) {
  return shared_from_records<Topology>(records, [&] {
    std::vector<RankRecord> ranks;
    ranks.reserve(records.size());
    for (const Bytes &b : records) ranks.push_back(decode_rank_record(b));
    return compute(std::move(ranks));
  });
}

CommPlacement place(const Topology &topo, const std::vector<int> &members, int my_index) {
  CommPlacement p;
  int me = members[my_index];
  // Distinct nodes numbered in order of their lowest member: one pass,
  // since communicators of thousands of ranks span hundreds of nodes.
  size_t nodes = static_cast<size_t>(topo.node_count);
  for (int w : members) nodes = std::max(nodes, static_cast<size_t>(topo.node_of[w]) + 1);
  std::vector<int> index_of_node(nodes, -1);
  int count = 0;
  for (int w : members) {
    int &index = index_of_node[static_cast<size_t>(topo.node_of[w])];
    if (index < 0) index = count++;
  }
  p.node_count = count;
  p.single_node = p.node_count == 1;
  p.node_index = index_of_node[static_cast<size_t>(topo.node_of[me])];
  p.local_rank = 0;
  p.local_size = 0;
  for (int i = 0; i < static_cast<int>(members.size()); ++i) {
    if (topo.node_of[members[i]] != topo.node_of[me]) continue;
    if (i < my_index) ++p.local_rank;
    ++p.local_size;
  }
  return p;
}

}  // namespace smd
