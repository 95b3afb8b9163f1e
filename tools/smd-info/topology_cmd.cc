// smd-info topology: forms a world from the launcher's environment and
// prints, from rank 0, where every rank runs (smd_comm_rank_info), then the
// GPUs of rank 0's machine (the core's run-time CUDA loader, compiled in).
#include <smd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "tool_support/core_interface.h"
#include "text_out.h"

namespace smdinfo {
namespace {

bool ok(smd_result_t r, const char *call) {
  if (r == SMD_SUCCESS) return true;
  fprintf(stderr, "smd-info topology: %s failed: %s: %s\n", call, smd_result_string(r),
          smd_last_error());
  return false;
}

void print_text(const std::vector<smd_rank_info_t> &infos, int nodes) {
  printf("world: %zu ranks on %d node%s\n", infos.size(), nodes, nodes == 1 ? "" : "s");
  std::vector<std::vector<std::string>> rows = {
      {"rank", "host", "node", "local_rank", "local_size", "pid", "numa", "cpus", "cpuset"}};
  for (const auto &i : infos)
    rows.push_back({std::to_string(i.rank), i.host, std::to_string(i.node_index),
                    std::to_string(i.local_rank), std::to_string(i.local_size),
                    std::to_string(i.pid), std::to_string(i.numa_node), std::to_string(i.cpus),
                    i.cpuset[0] ? i.cpuset : "?"});
  for (const std::string &line : align_columns(rows)) puts(line.c_str());
}

void print_gpus_text(const std::vector<smd::gpu::GpuInfo> &gpus, const std::string &why) {
  if (gpus.empty()) {
    // The loader's reason starts with "no CUDA device: " when CUDA itself answered.
    const std::string prefix = "no CUDA device: ";
    const bool same = why.compare(0, prefix.size(), prefix) == 0;
    printf("no CUDA devices (%s)\n", (same ? why.substr(prefix.size()) : why).c_str());
    return;
  }
  printf("GPUs of this machine: %zu\n", gpus.size());
  std::vector<std::vector<std::string>> rows = {
      {"gpu", "pci", "name", "memory_gib", "numa", "nearest_nic", "pci_hops"}};
  for (const auto &g : gpus)
    rows.push_back({std::to_string(g.index), g.pci_bus_id.empty() ? "?" : g.pci_bus_id,
                    g.name.empty() ? "?" : g.name,
                    g.memory_bytes ? std::to_string(g.memory_bytes >> 30) : "?",
                    std::to_string(g.numa_node), g.nearest_nic.empty() ? "-" : g.nearest_nic,
                    std::to_string(g.nic_hops)});
  for (const std::string &line : align_columns(rows)) puts(line.c_str());
}

std::string gpus_json(const std::vector<smd::gpu::GpuInfo> &gpus, const std::string &why) {
  std::string out = "\"gpus\":[";
  for (size_t i = 0; i < gpus.size(); ++i) {
    const auto &g = gpus[i];
    out += "{\"gpu\":" + std::to_string(g.index) + ",\"pci\":" + json_string(g.pci_bus_id) +
           ",\"name\":" + json_string(g.name) +
           ",\"memory_bytes\":" + std::to_string(g.memory_bytes) +
           ",\"numa_node\":" + std::to_string(g.numa_node) +
           ",\"nearest_nic\":" + json_string(g.nearest_nic) +
           ",\"pci_hops\":" + std::to_string(g.nic_hops) + "}" + (i + 1 < gpus.size() ? "," : "");
  }
  out += "],\"gpus_absent_reason\":" + json_string(gpus.empty() ? why : "");
  return out;
}

void print_json(const std::vector<smd_rank_info_t> &infos, int nodes) {
  printf("{\"ranks\":%zu,\"nodes\":%d,\"by_rank\":[\n", infos.size(), nodes);
  for (size_t r = 0; r < infos.size(); ++r) {
    const smd_rank_info_t &i = infos[r];
    printf(
        "{\"rank\":%d,\"host\":%s,\"node\":%d,\"local_rank\":%d,\"local_size\":%d,\"pid\":%d,"
        "\"numa_node\":%d,\"cpus\":%d,\"cpuset\":%s}%s\n",
        i.rank, json_string(i.host).c_str(), i.node_index, i.local_rank, i.local_size, i.pid,
        i.numa_node, i.cpus, json_string(i.cpuset).c_str(), r + 1 < infos.size() ? "," : "");
  }
  std::string why;
  const auto gpus = smd::gpu::list_gpus(&why);
  printf("],%s}\n", gpus_json(gpus, why).c_str());
}

}  // namespace

int run_topology(const Options &o) {
  smd_comm_t *world = nullptr;
  if (!ok(smd_comm_init(nullptr, &world), "smd_comm_init")) return 1;
  int rank = 0, size = 1, nodes = 1;
  bool good = ok(smd_comm_rank(world, &rank), "smd_comm_rank") &&
              ok(smd_comm_size(world, &size), "smd_comm_size") &&
              ok(smd_comm_node_count(world, &nodes), "smd_comm_node_count");
  if (good && rank == 0) {
    std::vector<smd_rank_info_t> infos(static_cast<size_t>(size));
    for (int r = 0; r < size && good; ++r) {
      infos[r].struct_size = sizeof(smd_rank_info_t);
      infos[r].version = SMD_RANK_INFO_VERSION;
      good = ok(smd_comm_rank_info(world, r, &infos[r]), "smd_comm_rank_info");
    }
    if (good) {
      if (o.json) print_json(infos, nodes);
      else {
        print_text(infos, nodes);
        std::string why;
        const auto gpus = smd::gpu::list_gpus(&why);
        print_gpus_text(gpus, why);
      }
      fflush(stdout);
    }
  }
  good = ok(smd_comm_destroy(world), "smd_comm_destroy") && good;
  return good ? 0 : 1;
}

}  // namespace smdinfo
