// The GPUs of this machine as CUDA numbers them, with where they sit: PCI
// address, NUMA node (sysfs) and the network device closest to each on the
// PCI tree, for smd-info topology and placement.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace smd::gpu {

struct GpuInfo {
  int index = 0;            // CUDA device ordinal
  std::string pci_bus_id;   // "0000:3b:00.0" (sysfs spelling)
  std::string name;         // "" without the driver API
  size_t memory_bytes = 0;  // 0 without the driver API
  int numa_node = -1;       // -1: unknown or a single node
  std::string nearest_nic;  // "" when no network device sits on the PCI tree
  int nic_hops = -1;        // PCI tree edges between the GPU and that NIC
};

// Every GPU CUDA sees; empty with `reason` saying why when none (CUDA not
// loadable, no device). Loads the CUDA runtime whatever SMD_CUDA says.
std::vector<GpuInfo> list_gpus(std::string *reason);

struct PciDevice {
  std::string name;  // "eth0", "mlx5_0"
  std::string path;  // resolved sysfs path, /sys/devices/pci0000:00/.../0000:3b:00.0
};

// The candidate nearest to `gpu_path` by edges through their deepest common
// PCI ancestor (ties: the first given); hops = -1 and "" when none.
std::string nearest_device(const std::string &gpu_path, const std::vector<PciDevice> &candidates,
                           int *hops);

// Network devices with a PCI parent: /sys/class/net and /sys/class/infiniband.
std::vector<PciDevice> pci_network_devices(const std::string &sysfs = "/sys");

}  // namespace smd::gpu
