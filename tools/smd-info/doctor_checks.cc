#include <dlfcn.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "tool_support/core_interface.h"
#include "doctor.h"
#include "smd_build_config.h"

#if SMD_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace smdinfo {
namespace {

std::string mib(unsigned long long bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

const char *verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kOk: return "OK";
    case Verdict::kWarn: return "WARN";
    case Verdict::kFail: return "FAIL";
  }
  return "?";
}

std::vector<CheckResult> check_plugins(std::vector<std::string> *loadable) {
  std::vector<CheckResult> out;
  // An SMD_PLUGIN_PATH entry that names nothing is a mistake the search
  // would skip without a word.
  if (auto path = smd::param_env("SMD_PLUGIN_PATH")) {
    size_t pos = 0;
    while (pos <= path->size()) {
      size_t end = path->find(':', pos);
      if (end == std::string::npos) end = path->size();
      std::string entry = path->substr(pos, end - pos);
      pos = end + 1;
      if (entry.empty() || access(entry.c_str(), R_OK) == 0) continue;
      out.push_back({"SMD_PLUGIN_PATH", Verdict::kFail, entry + ": " + strerror(errno),
                     "point SMD_PLUGIN_PATH at the folder holding libsmd-transport-*.so "
                     "(pkg-config --variable=plugindir smd), or unset it"});
    }
  }
  std::string loaded, failed;
  for (const smd::SurveyedPlugin &s : smd::survey_plugins()) {
    if (s.shadowed) continue;
    if (s.plugin) {
      loaded += (loaded.empty() ? "" : ", ") + s.name;
      loadable->push_back(s.name);
    } else {
      out.push_back({"plugin " + s.name, Verdict::kFail, s.error,
                     "install the library it needs (ldd " + s.path +
                         "), or remove the file or its folder from SMD_PLUGIN_PATH"});
    }
  }
  bool has_shm = std::find(loadable->begin(), loadable->end(), "shm") != loadable->end();
  std::string dirs;
  for (const std::string &d : smd::plugin_search_dirs()) dirs += (dirs.empty() ? "" : ", ") + d;
  if (!has_shm)
    out.insert(
        out.begin(),
        {"plugins", Verdict::kFail,
         "no loadable shm plugin in " + dirs + (loaded.empty() ? "" : " (found: " + loaded + ")"),
         "set SMD_PLUGIN_PATH to the folder holding libsmd-transport-shm.so, or "
         "reinstall smd"});
  else out.insert(out.begin(), {"plugins", Verdict::kOk, "loadable: " + loaded, ""});
  return out;
}

CheckResult check_dev_shm() {
  CheckResult r{"/dev/shm", Verdict::kOk, "", ""};
  struct statvfs st;
  if (statvfs("/dev/shm", &st) != 0 || access("/dev/shm", W_OK) != 0) {
    r.verdict = Verdict::kFail;
    r.detail = std::string("not usable: ") + strerror(errno);
    r.fix = "mount a tmpfs on /dev/shm (containers: --shm-size=1g or --ipc=host)";
    return r;
  }
  unsigned long long free_bytes = static_cast<unsigned long long>(st.f_bavail) * st.f_frsize;
  unsigned long long size = static_cast<unsigned long long>(st.f_blocks) * st.f_frsize;
  r.detail = mib(free_bytes) + " free of " + mib(size);
  // Each rank maps its rings and staging buffers there: a few MiB per
  // rank, more for large shared buffers (smd_mem_alloc).
  if (free_bytes < (256ull << 20)) {
    r.verdict = Verdict::kWarn;
    r.detail += ": ranks of one node may fail to create their shared segments";
    r.fix = "give /dev/shm at least 1 GiB (containers: --shm-size=1g or --ipc=host)";
  }
  return r;
}

CheckResult check_cross_memory_attach() {
  CheckResult r{"cross-memory attach", Verdict::kOk, "", ""};
  std::string scope = "none";
  if (std::ifstream f("/proc/sys/kernel/yama/ptrace_scope"); f) f >> scope;
  // Ranks are siblings, not parent and child: one child reads another's
  // memory, as the shm transport's receiver reads its sender's.
  static volatile char buffer[64] = "smd cross-memory attach probe";
  int ready[2];
  if (pipe(ready) != 0) return {r.item, Verdict::kWarn, "probe failed: pipe", ""};
  pid_t holder = fork();
  if (holder == 0) {
    close(ready[0]);
    (void)!write(ready[1], "x", 1);
    pause();
    _exit(0);
  }
  close(ready[1]);
  char c;
  (void)!read(ready[0], &c, 1);
  close(ready[0]);
  int status_pipe[2];
  (void)!pipe(status_pipe);
  pid_t reader = fork();
  if (reader == 0) {
    char got[64] = {0};
    iovec local{got, sizeof got}, remote{const_cast<char *>(buffer), sizeof got};
    ssize_t n = process_vm_readv(holder, &local, 1, &remote, 1, 0);
    int err = n == static_cast<ssize_t>(sizeof got) && !strcmp(got, "smd cross-memory attach probe")
                  ? 0
                  : (n < 0 ? errno : EIO);
    (void)!write(status_pipe[1], &err, sizeof err);
    _exit(0);
  }
  close(status_pipe[1]);
  int err = EIO;
  if (read(status_pipe[0], &err, sizeof err) != sizeof err) err = EIO;
  close(status_pipe[0]);
  waitpid(reader, nullptr, 0);
  kill(holder, SIGKILL);
  waitpid(holder, nullptr, 0);
  r.detail = "yama ptrace_scope " + scope + "; process_vm_readv between sibling processes: ";
  if (err == 0) {
    r.detail += "works (the shm transport's large messages and the cma collectives use it)";
    return r;
  }
  r.verdict = Verdict::kWarn;
  r.detail += std::string("denied (") + strerror(err) +
              "): the shm transport copies large messages through shared memory instead, and the "
              "single-copy cma collectives (SMD_ALGO=cma) are unavailable";
  r.fix = scope != "none" && scope != "0"
              ? "echo 0 | sudo tee /proc/sys/kernel/yama/ptrace_scope, or run with CAP_SYS_PTRACE"
              : "containers: --cap-add SYS_PTRACE (or a seccomp profile allowing process_vm_readv)";
  return r;
}

CheckResult check_hwloc() {
#if SMD_HAVE_HWLOC
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0)
    return {
        "hwloc", Verdict::kWarn, "built with hwloc, but the topology does not load",
        "check that /sys is mounted; NUMA nodes and CPU sets are reported as unknown meanwhile"};
  int numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  hwloc_topology_destroy(topo);
  return {"hwloc", Verdict::kOk,
          std::to_string(numa) + " NUMA node(s), " + std::to_string(cores) + " core(s), " +
              std::to_string(pus) + " hardware thread(s)",
          ""};
#else
  return {"hwloc", Verdict::kWarn,
          "built without hwloc: NUMA nodes and CPU sets are reported as unknown",
          "install libhwloc-dev and rebuild (meson setup -Dhwloc=enabled)"};
#endif
}

CheckResult check_cuda() {
  // dlopen, never a link dependency: the doctor runs where CUDA is absent.
  void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  void *runtime = dlopen("libcudart.so", RTLD_NOW | RTLD_LOCAL);
  std::string found = std::string("driver ") + (driver ? "found" : "not found") + ", runtime " +
                      (runtime ? "found" : "not found");
  int devices = -1;
  if (driver) {
    using Init = int (*)(unsigned);
    using Count = int (*)(int *);
    auto init = reinterpret_cast<Init>(dlsym(driver, "cuInit"));
    auto count = reinterpret_cast<Count>(dlsym(driver, "cuDeviceGetCount"));
    int n = 0;
    if (init && count && init(0) == 0 && count(&n) == 0) devices = n;
    found += devices >= 0 ? ", " + std::to_string(devices) + " device(s)" : ", cuInit failed";
  }
  // Left open: a driver's dlclose at exit is known to misbehave.
  if (driver && devices < 0)
    return {"cuda", Verdict::kWarn, found,
            "the driver is installed but does not start: check nvidia-smi"};
  // Host memory works everywhere; a machine without CUDA is not a fault.
  return {"cuda", Verdict::kOk,
          found + (SMD_HAVE_CUDA ? "" : "; this build is host-memory only (built without CUDA)"),
          ""};
}

CheckResult check_store_port() {
  CheckResult r{"store port", Verdict::kOk, "", ""};
  int64_t port = 0;
  try {
    port = smd::param_int("SMD_MASTER_PORT");
  } catch (const smd::Error &e) {
    return {r.item, Verdict::kFail, e.message(), "set SMD_MASTER_PORT to a port number"};
  }
  std::string name =
      "SMD_MASTER_PORT " + std::to_string(port) +
      (smd::param_origin("SMD_MASTER_PORT") == smd::ParamOrigin::kDefault ? " (default)" : "");
  if (port < 1 || port > 65535)
    return {r.item, Verdict::kFail, name + " is not a TCP port", "set SMD_MASTER_PORT in 1..65535"};
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  int rc = fd < 0 ? -1 : bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
  int err = errno;
  if (fd >= 0) close(fd);
  if (rc == 0) {
    r.detail = name + " is free here (rank 0 serves the rendezvous store on it)";
    return r;
  }
  r.verdict = Verdict::kWarn;
  r.detail = name + " cannot be served here: " + strerror(err);
  r.fix = err == EADDRINUSE
              ? "another job or torchrun's agent holds it: smdrun picks a free port itself; "
                "elsewhere set SMD_MASTER_PORT to a free port"
              : "set SMD_MASTER_PORT to a port above 1023";
  return r;
}

}  // namespace smdinfo
