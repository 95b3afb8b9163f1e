#include "core/gpu/gpu_topology.h"

#include <dirent.h>
#include <stdlib.h>

#include <algorithm>
#include <cctype>
#include <fstream>

#include "core/gpu/cuda_api.h"

namespace smd::gpu {
namespace {

std::vector<std::string> components(const std::string &path) {
  std::vector<std::string> parts;
  size_t pos = 0;
  while (pos < path.size()) {
    size_t end = path.find('/', pos);
    if (end == std::string::npos) end = path.size();
    if (end > pos) parts.push_back(path.substr(pos, end - pos));
    pos = end + 1;
  }
  return parts;
}

std::string resolved(const std::string &path) {
  char *real = realpath(path.c_str(), nullptr);
  std::string r = real ? real : "";
  free(real);
  return r;
}

std::vector<std::string> entries(const std::string &dir) {
  std::vector<std::string> names;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d))
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::string nearest_device(const std::string &gpu_path, const std::vector<PciDevice> &candidates,
                           int *hops) {
  const auto gpu = components(gpu_path);
  std::string best;
  int best_hops = -1;
  for (const auto &c : candidates) {
    const auto nic = components(c.path);
    size_t common = 0;
    while (common < gpu.size() && common < nic.size() && gpu[common] == nic[common]) ++common;
    // Below /sys/devices, a shared root complex (pci0000:00) is the least
    // two devices may share to count as reachable over PCI at all.
    if (common < 3) continue;
    const int h = int(gpu.size() - common + nic.size() - common);
    if (best_hops < 0 || h < best_hops) {
      best_hops = h;
      best = c.name;
    }
  }
  if (hops) *hops = best_hops;
  return best;
}

std::vector<PciDevice> pci_network_devices(const std::string &sysfs) {
  std::vector<PciDevice> found;
  for (const char *cls : {"/class/infiniband/", "/class/net/"}) {
    for (const auto &name : entries(sysfs + cls)) {
      std::string path = resolved(sysfs + cls + name + "/device");
      if (path.find("/pci") != std::string::npos) found.push_back({name, path});
    }
  }
  return found;
}

std::vector<GpuInfo> list_gpus(std::string *reason) {
  std::vector<GpuInfo> gpus;
  const CudaStatus &st = cuda_status();
  const CudaApi *a = cuda_api();
  if (!a || st.devices == 0) {
    if (reason) *reason = st.reason;
    return gpus;
  }
  const auto nics = pci_network_devices();
  for (int d = 0; d < st.devices; ++d) {
    GpuInfo g;
    g.index = d;
    char bus[64] = {0};
    if (a->DeviceGetPCIBusId(bus, sizeof bus, d) == 0) {
      g.pci_bus_id = bus;
      for (char &ch : g.pci_bus_id) ch = char(tolower(static_cast<unsigned char>(ch)));
    }
    int dev = 0;
    if (a->cuDeviceGet && a->cuDeviceGet(&dev, d) == 0) {
      char name[256] = {0};
      if (a->cuDeviceGetName && a->cuDeviceGetName(name, sizeof name, dev) == 0) g.name = name;
      if (a->cuDeviceTotalMem) a->cuDeviceTotalMem(&g.memory_bytes, dev);
    }
    if (!g.pci_bus_id.empty()) {
      const std::string sys = "/sys/bus/pci/devices/" + g.pci_bus_id;
      std::ifstream numa(sys + "/numa_node");
      if (!(numa >> g.numa_node)) g.numa_node = -1;
      g.nearest_nic = nearest_device(resolved(sys), nics, &g.nic_hops);
    }
    gpus.push_back(g);
  }
  return gpus;
}

}  // namespace smd::gpu
