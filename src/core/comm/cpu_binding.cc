#include "core/comm/cpu_binding.h"

#include <sched.h>

#include <cerrno>

#include "smd_build_config.h"

#if SMD_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace smd {
namespace {

// The affinity mask of the calling thread, growing the mask for machines
// with more CPUs than cpu_set_t holds.
std::vector<int> affinity_cpus() {
  std::vector<int> out;
  for (int ncpu = 1024; ncpu <= (1 << 20); ncpu *= 4) {
    cpu_set_t *set = CPU_ALLOC(ncpu);
    if (!set) return out;
    size_t bytes = CPU_ALLOC_SIZE(ncpu);
    CPU_ZERO_S(bytes, set);
    int rc = sched_getaffinity(0, bytes, set);
    if (rc == 0)
      for (int c = 0; c < ncpu; ++c)
        if (CPU_ISSET_S(c, bytes, set)) out.push_back(c);
    int err = errno;
    CPU_FREE(set);
    if (rc == 0 || err != EINVAL) return out;
  }
  return out;
}

#if SMD_HAVE_HWLOC
// The machine's topology, loaded once and kept for the life of the process:
// hwloc dlopens its plugins (and the X11, OpenCL and libxml2 libraries they
// need) with the first topology and dlcloses them with the last, and a
// library unloaded that way leaves stale thread-local storage behind, which
// LeakSanitizer's scan of the threads at exit crashed on. The NUMA layout
// does not change while we run; queries of a loaded topology are
// thread-safe.
hwloc_topology_t machine_topology() {
  static hwloc_topology_t topo = [] {
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0) return hwloc_topology_t{nullptr};
    // Machine, NUMA nodes and PUs are all this needs (and they stay whatever
    // the filter says); skipping caches, cores and I/O keeps loading quick.
    hwloc_topology_set_all_types_filter(t, HWLOC_TYPE_FILTER_KEEP_NONE);
    if (hwloc_topology_load(t) != 0) {
      hwloc_topology_destroy(t);
      return hwloc_topology_t{nullptr};
    }
    return t;
  }();
  return topo;
}

int numa_node_holding(const std::vector<int> &cpus) {
  hwloc_topology_t topo = machine_topology();
  if (!topo) return -1;
  int found = -1, nodes = 0;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (!set) return -1;
  for (int c : cpus) hwloc_bitmap_set(set, static_cast<unsigned>(c));
  hwloc_obj_t node = nullptr;
  while ((node = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, node)) != nullptr) {
    if (!node->cpuset || !hwloc_bitmap_intersects(node->cpuset, set)) continue;
    found = static_cast<int>(node->os_index);
    ++nodes;
  }
  hwloc_bitmap_free(set);
  return nodes == 1 ? found : -1;
}
#endif

}  // namespace

std::string format_cpu_list(const std::vector<int> &cpus) {
  std::string s;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!s.empty()) s += ',';
    s += std::to_string(cpus[i]);
    if (j > i) s += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return s;
}

bool parse_cpu_list(const std::string &list, std::vector<int> *out) {
  std::vector<int> cpus;
  size_t i = 0;
  auto number = [&](int *v) {
    size_t start = i;
    long n = 0;
    while (i < list.size() && list[i] >= '0' && list[i] <= '9' && n <= (1 << 24))
      n = n * 10 + (list[i++] - '0');
    *v = static_cast<int>(n);
    return i > start && n <= (1 << 24);
  };
  while (i < list.size()) {
    int lo = 0, hi = 0;
    if (!number(&lo)) return false;
    hi = lo;
    if (i < list.size() && list[i] == '-') {
      ++i;
      if (!number(&hi) || hi < lo) return false;
    }
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
    if (i < list.size() && list[i++] != ',') return false;
  }
  if (cpus.empty()) return false;
  *out = std::move(cpus);
  return true;
}

CpuBinding measure_cpu_binding() {
  CpuBinding b;
  std::vector<int> cpus = affinity_cpus();
  if (cpus.empty()) return b;
  b.cpus = static_cast<int>(cpus.size());
  b.cpuset = format_cpu_list(cpus);
#if SMD_HAVE_HWLOC
  b.numa_node = numa_node_holding(cpus);
#endif
  return b;
}

}  // namespace smd
