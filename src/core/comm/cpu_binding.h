// Where this process may run: the CPUs of its affinity mask and, with the
// hwloc build option, the NUMA node holding them. Measured by each rank at
// init and published in its rank record.
#pragma once

#include <string>
#include <vector>

namespace smd {

struct CpuBinding {
  int cpus = 1;        // CPUs it may run on (1 if unknown)
  std::string cpuset;  // those CPUs as a list, "0-3,8"; "" if unknown
  int numa_node = -1;  // the one NUMA node holding all of them; -1 if
                       // unknown (no hwloc) or spread over several
};

CpuBinding measure_cpu_binding();

// Ascending CPU numbers as a list of ranges: {0,1,2,3,8} -> "0-3,8".
std::string format_cpu_list(const std::vector<int> &cpus);

// The reverse; false (and `out` untouched) for a malformed or empty list.
bool parse_cpu_list(const std::string &list, std::vector<int> *out);

}  // namespace smd
