#include "core/bootstrap/launcher_env.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "core/util/error.h"
#include "core/util/fnv1a.h"
#include "core/util/log.h"
#include "core/util/params.h"

namespace smd {
namespace {

// Variables of other launchers are not ours to register: read them raw.
std::optional<std::string> foreign_env(const char *name) {
  const char *v = getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

// SMD_* variables go through the registry, which knows them all.
std::optional<std::string> env(const char *name) {
  if (strncmp(name, "SMD_", 4) == 0) return param_env(name);
  return foreign_env(name);
}

int parse_int(const char *name, const std::string &text) {
  errno = 0;
  char *end = nullptr;
  long v = strtol(text.c_str(), &end, 10);
  if (errno || end == text.c_str() || *end || v < INT_MIN || v > INT_MAX)
    fail(SMD_ERR_INVALID_ARGUMENT, "%s=%s is not an integer", name, text.c_str());
  return static_cast<int>(v);
}

// An integer variable, remembered with its name so that errors can name it.
struct IntVar {
  const char *name = nullptr;
  int value = -1;
  bool set() const { return name != nullptr; }
};

IntVar int_var(const char *name) {
  IntVar v;
  if (auto text = env(name)) {
    v.name = name;
    v.value = parse_int(name, *text);
  }
  return v;
}

std::optional<std::string> first_env(std::initializer_list<const char *> names,
                                     const char **which = nullptr) {
  for (const char *n : names)
    if (auto v = env(n)) {
      if (which) *which = n;
      return v;
    }
  return std::nullopt;
}

// What a launcher said, with the names of the variables it was read from.
struct Detected {
  LaunchEnv env;
  IntVar rank, size, local_rank, local_size;
  std::string job_id;
  // Address the launcher implies when none is given explicitly; "" = none.
  std::string implied_addr;
};

void validate(const Detected &d) {
  if (d.size.value < 1)
    fail(SMD_ERR_INVALID_ARGUMENT, "%s=%d must be at least 1", d.size.name, d.size.value);
  if (d.rank.value < 0)
    fail(SMD_ERR_INVALID_ARGUMENT, "%s=%d is negative", d.rank.name, d.rank.value);
  if (d.rank.value >= d.size.value)
    fail(SMD_ERR_INVALID_ARGUMENT, "%s=%d is not below %s=%d", d.rank.name, d.rank.value,
         d.size.name, d.size.value);
  if (d.local_size.set() && d.local_size.value < 1)
    fail(SMD_ERR_INVALID_ARGUMENT, "%s=%d must be at least 1", d.local_size.name,
         d.local_size.value);
  if (d.local_size.set() && d.local_size.value > d.size.value)
    fail(SMD_ERR_INVALID_ARGUMENT, "%s=%d is larger than %s=%d", d.local_size.name,
         d.local_size.value, d.size.name, d.size.value);
  if (d.local_rank.set() && d.local_rank.value < 0)
    fail(SMD_ERR_INVALID_ARGUMENT, "%s=%d is negative", d.local_rank.name, d.local_rank.value);
  if (d.local_rank.set() && d.local_size.set() && d.local_rank.value >= d.local_size.value)
    fail(SMD_ERR_INVALID_ARGUMENT, "%s=%d is not below %s=%d", d.local_rank.name,
         d.local_rank.value, d.local_size.name, d.local_size.value);
}

bool single_node(const Detected &d) {
  return d.size.value == 1 || (d.local_size.set() && d.local_size.value == d.size.value);
}

bool from_smd(Detected &d) {
  auto rank = int_var("SMD_RANK");
  auto size = int_var("SMD_WORLD_SIZE");
  if (!rank.set() && !size.set()) return false;
  if (!rank.set() || !size.set())
    fail(SMD_ERR_INVALID_ARGUMENT, "%s is set but %s is not (set both)",
         rank.set() ? "SMD_RANK" : "SMD_WORLD_SIZE", rank.set() ? "SMD_WORLD_SIZE" : "SMD_RANK");
  d.env.launcher = "smd";
  d.env.why = "SMD_RANK/SMD_WORLD_SIZE set by smdrun";
  d.rank = rank;
  d.size = size;
  d.local_rank = int_var("SMD_LOCAL_RANK");
  d.local_size = int_var("SMD_LOCAL_SIZE");
  // smdrun starts one node; without a node count, assume it.
  if (!d.local_size.set() || single_node(d)) d.implied_addr = "127.0.0.1";
  return true;
}

// The variables a launcher sets: its rank and world size (both set mean
// this launcher started the process) and, where it has them, the rank and
// size on the node (nullptr: it has none).
struct LauncherVars {
  const char *launcher;
  const char *why;
  const char *rank, *size, *local_rank, *local_size;
};

// Reads v's variables into d when v's launcher started the process.
bool read_launcher_vars(Detected &d, const LauncherVars &v) {
  if (!foreign_env(v.rank) || !foreign_env(v.size)) return false;
  d.env.launcher = v.launcher;
  d.env.why = v.why;
  d.rank = int_var(v.rank);
  d.size = int_var(v.size);
  if (v.local_rank) d.local_rank = int_var(v.local_rank);
  if (v.local_size) d.local_size = int_var(v.local_size);
  return true;
}

bool from_torchrun(Detected &d) {
  // RANK and WORLD_SIZE are generic names: only both together mean torchrun.
  if (!read_launcher_vars(d, {"torchrun", "torchrun variables RANK/WORLD_SIZE", "RANK",
                              "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"}))
    return false;
  d.job_id = foreign_env("TORCHELASTIC_RUN_ID").value_or("");
  if (single_node(d)) d.implied_addr = "127.0.0.1";
  return true;
}

bool from_openmpi(Detected &d) {
  if (!read_launcher_vars(
          d, {"openmpi", "Open MPI variables OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE",
              "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
              "OMPI_COMM_WORLD_LOCAL_SIZE"}))
    return false;
  d.job_id = first_env({"OMPI_MCA_ess_base_jobid", "OMPI_MCA_orte_ess_jobid", "PMIX_NAMESPACE"})
                 .value_or("");
  // mpirun tells nothing about where rank 0 runs, except when all are here.
  if (single_node(d)) d.implied_addr = "127.0.0.1";
  return true;
}

// Tasks per node of a Slurm step, "2(x3),1" -> {2, 2, 2, 1}; empty if the
// text is not in that form.
std::vector<int> slurm_tasks_per_node(const std::string &text) {
  std::vector<int> counts;
  size_t i = 0;
  while (i < text.size()) {
    char *end = nullptr;
    long n = strtol(text.c_str() + i, &end, 10);
    if (end == text.c_str() + i || n < 1 || n > INT_MAX) return {};
    i = end - text.c_str();
    long repeat = 1;
    if (text.compare(i, 2, "(x") == 0) {
      repeat = strtol(text.c_str() + i + 2, &end, 10);
      if (end == text.c_str() + i + 2 || *end != ')' || repeat < 1 || repeat > 1000000) return {};
      i = end - text.c_str() + 1;
    }
    counts.insert(counts.end(), repeat, static_cast<int>(n));
    if (i < text.size() && text[i++] != ',') return {};
  }
  return counts;
}

int slurm_local_size() {
  const char *which = nullptr;
  auto text = first_env({"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"}, &which);
  if (!text) return -1;
  std::vector<int> counts = slurm_tasks_per_node(*text);
  if (counts.empty()) {
    SMD_WARN("init", "ignoring %s=%s: not a Slurm tasks-per-node list", which, text->c_str());
    return -1;
  }
  auto node = foreign_env("SLURM_NODEID");
  if (node) {
    char *end = nullptr;
    long id = strtol(node->c_str(), &end, 10);
    if (!*end && id >= 0 && static_cast<size_t>(id) < counts.size()) return counts[id];
  }
  for (int c : counts)
    if (c != counts[0]) return -1;
  return counts[0];
}

bool from_slurm(Detected &d) {
  if (!read_launcher_vars(d, {"slurm", "Slurm variables SLURM_PROCID/SLURM_NTASKS", "SLURM_PROCID",
                              "SLURM_NTASKS", "SLURM_LOCALID", nullptr}))
    return false;
  int local_size = slurm_local_size();
  if (local_size > 0) {
    // A derived hint: drop it rather than fail when it disagrees.
    if (local_size > d.size.value || (d.local_rank.set() && d.local_rank.value >= local_size)) {
      SMD_WARN("init",
               "ignoring the local size %d derived from "
               "SLURM_TASKS_PER_NODE: it disagrees with SLURM_LOCALID or "
               "SLURM_NTASKS",
               local_size);
    } else {
      d.local_size.name = "SLURM_TASKS_PER_NODE";
      d.local_size.value = local_size;
    }
  }
  if (auto job = foreign_env("SLURM_JOB_ID")) {
    d.job_id = *job;
    if (auto step = first_env({"SLURM_STEP_ID", "SLURM_STEPID"})) d.job_id += "." + *step;
  }
  const char *which = nullptr;
  if (auto nodes =
          first_env({"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"}, &which)) {
    try {
      d.implied_addr = slurm_first_host(*nodes);
    } catch (const Error &e) {
      fail(SMD_ERR_INVALID_ARGUMENT, "%s: %s", which, e.what());
    }
  } else if (single_node(d)) {
    d.implied_addr = "127.0.0.1";
  }
  return true;
}

void no_launcher(Detected &d) {
  d.env.launcher = "none";
  d.env.why = "no launcher variables found: a single-rank world";
  d.rank = {"(no launcher)", 0};
  d.size = {"(no launcher)", 1};
  d.local_rank = {"(no launcher)", 0};
  d.local_size = {"(no launcher)", 1};
  d.implied_addr = "127.0.0.1";
}

}  // namespace

LaunchEnv detect_launch_env() {
  Detected d;
  if (!from_smd(d) && !from_torchrun(d) && !from_openmpi(d) && !from_slurm(d)) no_launcher(d);
  validate(d);

  LaunchEnv &e = d.env;
  e.rank = d.rank.value;
  e.world_size = d.size.value;
  e.local_rank = d.local_rank.value;
  e.local_size = d.local_size.value;

  const char *addr_var = nullptr;
  if (auto addr = first_env({"SMD_MASTER_ADDR", "MASTER_ADDR"}, &addr_var)) {
    e.master_addr = *addr;
    e.why += format("; store host from %s", addr_var);
  } else {
    e.master_addr = d.implied_addr;
  }

  const char *port_var = nullptr;
  if (auto port = first_env({"SMD_MASTER_PORT", "MASTER_PORT"}, &port_var)) {
    e.master_port = parse_int(port_var, *port);
    if (e.master_port < 1 || e.master_port > 65535)
      fail(SMD_ERR_INVALID_ARGUMENT, "%s=%s is not a TCP port (1..65535)", port_var, port->c_str());
    e.why += format("; store port from %s", port_var);
    if (strcmp(port_var, "MASTER_PORT") == 0) {
      e.master_port = e.master_port < 65535 ? e.master_port + 1 : e.master_port - 1;
      e.why += format(" (%d: MASTER_PORT itself is torch's)", e.master_port);
    }
  }

  if (auto token = param_env("SMD_JOB_TOKEN")) {
    e.job_token = *token;
    e.job_token_secret = true;
  } else e.job_token = d.job_id;
  return e;
}

int default_store_port(const LaunchEnv &env) {
  if (env.job_token.empty()) return 29500;
  // FNV-1a: unlike std::hash, the same on every rank and every build.
  return 29500 + static_cast<int>(fnv1a32(env.job_token) % 2000);
}

std::string slurm_first_host(const std::string &hostlist) {
  std::string host;
  size_t i = 0;
  while (i < hostlist.size() && hostlist[i] != ',') {
    char c = hostlist[i];
    if (c == ']')
      fail(SMD_ERR_INVALID_ARGUMENT, "hostlist '%s' has an unmatched ']'", hostlist.c_str());
    if (c != '[') {
      host += c;
      ++i;
      continue;
    }
    size_t close = hostlist.find(']', i);
    if (close == std::string::npos)
      fail(SMD_ERR_INVALID_ARGUMENT, "hostlist '%s' has an unclosed '['", hostlist.c_str());
    // "[03-07,9]": the first host takes the low end of the first range,
    // digits as written (the width is part of the name).
    std::string ranges = hostlist.substr(i + 1, close - i - 1);
    std::string low = ranges.substr(0, ranges.find_first_of(",-"));
    if (low.empty() || low.find_first_not_of("0123456789") != std::string::npos)
      fail(SMD_ERR_INVALID_ARGUMENT, "hostlist '%s' has a bad range '[%s]'", hostlist.c_str(),
           ranges.c_str());
    host += low;
    i = close + 1;
  }
  if (host.empty()) fail(SMD_ERR_INVALID_ARGUMENT, "hostlist '%s' names no host", hostlist.c_str());
  return host;
}

}  // namespace smd
