#include "core/util/params.h"

#include <cassert>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <strings.h>

#include "core/util/error.h"

namespace smd {

const std::vector<ParamDef> &all_params() {
  static const std::vector<ParamDef> params = {
      // Launch and rendezvous
      {"SMD_RANK", "int", "", "This process's rank in the world (set by smdrun)."},
      {"SMD_WORLD_SIZE", "int", "", "Number of ranks in the world."},
      {"SMD_LOCAL_RANK", "int", "", "Rank among the ranks of this node (a hint; smd computes it)."},
      {"SMD_LOCAL_SIZE", "int", "", "Number of ranks on this node (a hint; smd computes it)."},
      {"SMD_MASTER_ADDR", "string", "127.0.0.1", "Host of the rendezvous store served by rank 0."},
      {"SMD_MASTER_PORT", "int", "29500", "TCP port of the rendezvous store."},
      {"SMD_JOB_TOKEN", "string", "",
       "Secret every rank presents to the store (smdrun sets a random one). Unset: rank 0 draws "
       "one and hands it to the other ranks in a private file under SMD_RENDEZVOUS_DIR (see "
       "docs/SECURITY.md)."},
      {"SMD_RENDEZVOUS_DIR", "string", "",
       "Private directory (mode 0700) where rank 0 leaves the job token and the store's address "
       "for the other ranks when SMD_JOB_TOKEN is unset; it must be shared by every host of the "
       "job. Default: /tmp/smd-UID on one host, $HOME/.smd/rendezvous across hosts; 'off': the "
       "launcher's job id is the token (guessable)."},
      {"SMD_NODE_ID", "string", "",
       "Overrides this rank's node identity (host name + boot id), e.g. to make ranks of one "
       "machine count as several nodes."},
      {"SMD_RANKS_PER_NODE", "int", "0",
       "Splits the ranks of each machine (or SMD_NODE_ID node) into fake nodes of this many "
       "consecutive world ranks (node = rank / N), e.g. for ranks that are threads of one process; "
       "0 = off."},
      {"SMD_TIMEOUT", "seconds", "300",
       "Deadline in seconds (fractions allowed) of every blocking step: rendezvous, collectives, "
       "waits. smd_init_options_t.timeout_ms, in milliseconds, overrides it (300 seconds = 300000 "
       "ms)."},
      // Transports
      {"SMD_TRANSPORT", "string", "auto",
       "Transport: auto (shm within a node, best network plugin between nodes), shm, a plugin name "
       "for all traffic, or LOCAL+NETWORK (e.g. shm+tcp) for one inside nodes and another between "
       "them."},
      {"SMD_PLUGIN_PATH", "list", "",
       "Colon-separated directories or plugin files searched before the built-in plugin "
       "directory."},
      {"SMD_REG_CACHE", "int", "64",
       "Released memory registrations the core keeps per transport for plugins that need "
       "registered buffers, while a plugin reports unmapped memory (0: deregister at once)."},
      // Algorithms
      {"SMD_ALGO", "string", "auto",
       "Force algorithms: one name for every collective (direct, ring, rd, tree, pairwise, "
       "hierarchical, cma, herring) or a list like allreduce=ring,allgather=direct; a forced "
       "algorithm "
       "that does not apply to a communicator falls back to the automatic choice (logged at "
       "info)."},
      {"SMD_HIER_CHUNK_BYTES", "int", "1048576",
       "Hierarchical allreduce splits vectors into chunks of about this many bytes whose node and "
       "network phases overlap (the network phase on a worker thread); 0 = one chunk."},
      {"SMD_FUSION_BYTES", "int", "1048576",
       "Allreduces of one datatype and op queued in a group (smd_group_start/smd_group_end) are "
       "packed into buffers of at most this many bytes, each reduced as one allreduce split evenly "
       "over the ranks; larger ones run alone; 0 = no fusion."},
      {"SMD_CHECK", "string", "fast",
       "Agreement check of every collective run over point-to-point messages (the arena checks its "
       "own descriptors): fast (the default: each rank sends its call's fingerprint to its ring "
       "neighbours beside the algorithm's first messages and salts the call's tags with it, so "
       "ranks that disagree on the collective, datatype, op, count, root or call sequence all get "
       "SMD_ERR_MISMATCH naming both calls, with no extra round trip), full (fast plus a "
       "dissemination round of the fingerprint before every call, ceil(log2 p) small messages) or "
       "off (no check: such ranks may time out or get different data)."},
      {"SMD_TUNING_FILE", "string", "",
       "Link costs for the automatic choice of algorithms (written by smd-bench --tune): arena_, "
       "local_, cma_ and net_ alpha_us and gbps, and reduce_gbps, one 'key = value' per line (a "
       "regular file of at most 64 KiB, values in range); a key named here wins over the node's "
       "calibration."},
      {"SMD_STREAM_MIN_BYTES", "int", "8388608",
       "Collectives whose output is at least this many bytes write it with non-temporal "
       "(cache-bypassing) stores, and broadcast roots stage it with them; 0 = always, -1 = never. "
       "Unset: from the streaming crossover the node's calibration measured, divided by the ranks "
       "on the node (this default only without a calibration)."},
      {"SMD_STAGE_STREAM_MIN_BYTES", "int", "-1",
       "Direct collectives stage a round's data with non-temporal stores when it is at least this "
       "many bytes (and at most SMD_STAGE_STREAM_MAX_BYTES); -1 = never. Unset (with "
       "SMD_STAGE_STREAM_MAX_BYTES unset too): the range where the node calibration's staging "
       "probe measured them faster (this default only without a calibration)."},
      {"SMD_STAGE_STREAM_MAX_BYTES", "int", "-1",
       "Upper end of the staging sizes that use non-temporal stores (-1 = no upper end)."},
      {"SMD_CALIBRATE", "string", "auto",
       "Measure the node's copy bandwidths, cache-line latency, cross-memory-attach reads, "
       "streaming-store crossover and staging range at the first communicator creation (tens of "
       "milliseconds, docs/PERFORMANCE.md; once per boot: the values are cached in a file in "
       "SMD_RENDEZVOUS_DIR, $XDG_RUNTIME_DIR "
       "or /tmp). A world that spans nodes also measures the link between them when it forms "
       "(docs/SCALE.md; "
       "every rank holds the same values) for the choices of communicators across nodes. "
       "auto: use the cached values if any, else measure; force: measure again; off: the "
       "documented defaults. Every rank must have the same value."},
      {"SMD_STAGE_ADAPT", "bool", "1",
       "Allgathers of at least SMD_STREAM_MIN_BYTES compare their staging copies with their own "
       "streaming copy out and stage with non-temporal stores for a while when staging runs over "
       "3x slower (cache-line transfers between the ranks' CPUs became slow)."},
      {"SMD_CMA", "bool", "1",
       "Whether the cma algorithms (allgather, broadcast and reduce_scatter of a node's ranks "
       "reading each other's buffers with process_vm_readv, one copy) may run; they also need the "
       "kernel to allow the reads, which each communicator checks when it is created (0: never)."},
      {"SMD_FAST_PATH", "bool", "1",
       "Blocking calls of the one thread that uses a communicator find it without a lock and run "
       "inline (no locked instruction per call; another thread, a nonblocking call or a destroy "
       "ends this with a membarrier(2) fence). 0 = every call takes the registry's lock and the "
       "executor's flag."},
      {"SMD_WAIT", "string", "auto",
       "How a rank waits: auto (spin, then yield, then sleep; yield at once when ranks outnumber "
       "cores), spin, yield, sleep."},
      // Debugging
      {"SMD_FLIGHT_RECORDER", "int", "128",
       "Collective calls each communicator remembers (kind, datatype, op, count, root, algorithm, "
       "times, state) for the flight recorder's dump on a failure, an abort or a fatal signal; 0 = "
       "off."},
      {"SMD_DUMP_DIR", "string", "",
       "Directory the flight recorder writes smd-flight.rank<R>.comm<ID>-<M>.json into on a failed "
       "collective, smd_comm_abort or a fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, "
       "SIGTERM; handlers installed only when this is set); unset = no dumps; created with mode "
       "0700 when it does not exist. Read them with smd-info flight DIR."},
      {"SMD_TRACE", "string", "",
       "Write a Chrome/Perfetto trace of every collective call and point-to-point transfer: rank R "
       "writes FILE.rankR.json for SMD_TRACE=FILE.json (merge them with smd-info trace)."},
      // GPUs
      {"SMD_CUDA", "string", "auto",
       "Whether smd looks at CUDA: auto (once the process has loaded the CUDA driver, buffers are "
       "classified as host or device memory), on (load the CUDA runtime at the first call), off "
       "(every buffer is host memory; CUDA is never opened)."},
      {"SMD_CUDA_LIBRARY", "string", "",
       "The CUDA runtime library to open (a path or soname); default: libcudart.so.13, .12, then "
       "libcudart.so."},
      {"SMD_CUDA_DRIVER_LIBRARY", "string", "libcuda.so.1",
       "The CUDA driver library: its presence in the process makes SMD_CUDA=auto count it as a "
       "CUDA process, and smd asks it for address ranges, device names and memory. Tests name the "
       "host stand-in for CUDA here (docs/GPU.md)."},
      {"SMD_GPU_IPC", "bool", "0",
       "1: allreduce, allgather, reduce_scatter, broadcast, reduce and alltoall (out of place) of "
       "a communicator whose members are all on one node, on device memory, read the peers' "
       "buffers in place through CUDA IPC instead of staging through host memory (young: not yet "
       "run on a GPU, see docs/GPU.md). Every rank must set it alike (smd_comm_init checks)."},
      {"SMD_GPU_IPC_ONESHOT_BYTES", "int", "65536",
       "With SMD_GPU_IPC=1, an allreduce of at most this many bytes, out of place on every rank, "
       "runs one-shot (each rank reduces the whole vector from every rank's input: one barrier); "
       "larger or in place: reduce-scatter then allgather. Every rank must set it alike "
       "(smd_comm_init checks)."},
      {"SMD_GPU_DIRECT", "string", "auto",
       "How collectives on device memory move data between ranks, where CUDA IPC does not apply: "
       "auto (the algorithms run on the device buffers when every transport of the communicator "
       "declares device memory, e.g. UCX built with CUDA; else they stage through pinned host "
       "memory), on (always on the device buffers; a call fails with SMD_ERR_NOT_SUPPORTED naming "
       "a transport that does not declare device memory), off (always staged). Every rank must "
       "set it alike (smd_comm_init checks)."},
      {"SMD_GPU_STAGE_CHUNK_BYTES", "int", "4194304",
       "The staged route for device allreduce, broadcast and reduce copies in chunks of about "
       "this many bytes, each chunk's collective running while the next is copied in and the "
       "last copied out; 0 = one copy in, one collective, one copy out. Every rank must set it "
       "alike (smd_comm_init checks)."},
      {"SMD_GPU_MODULE", "string", "",
       "Path of libsmd-gpu.so, the CUDA kernels; default: beside libsmd (smd/ or, in a build tree, "
       "gpu/), then the install directory."},
      // Logging
      {"SMD_DEBUG", "string", "warn", "Log level: none, warn, info, trace."},
      {"SMD_DEBUG_FILE", "string", "",
       "Append logs to this file instead of stderr (%p = pid, %h = host); only to a regular file "
       "of this user, never through a link (else a warning, and stderr)."},
      {"SMD_DEBUG_SUBSYS", "list", "",
       "Comma-separated subsystems to log at info/trace (init,store,plugin,transport,coll,comm); "
       "empty = all."},
  };
  return params;
}

const ParamDef *find_param(const char *name) {
  for (const auto &p : all_params())
    if (!strcmp(p.name, name)) return &p;
  return nullptr;
}

const std::vector<ForeignParam> &foreign_params() {
  static const std::vector<ForeignParam> names = {
      {"SMD_LIBRARY", "python binding: the libsmd.so to load"},
      {"SMD_TORCH_BACKEND", "python binding: the torch backend extension to load"},
      {"SMD_HEADER", "python binding: the smd.h to read declarations from"},
      {"SMD_PY_BACKEND", "python binding: cffi or ctypes"},
      {"SMD_PY_FASTCALL", "python binding: the smd._fastcall extension to load (0: none)"},
      {"SMD_SMDRUN", "bindings' tests and smd.run: the smdrun to launch"},
      {"SMD_LIB_DIR", "rust binding's build script: where libsmd.so is"},
      {"SMD_ROOT", "scripts: the source tree"},
      {"SMD_JOBS", "scripts: parallel build jobs"},
      {"SMD_NO_INSTALL", "scripts: never install packages"},
      {"SMD_NO_OPTIONAL", "scripts: leave optional packages alone"},
      {"SMD_NO_SANITIZE", "scripts: skip the sanitizer build"},
      {"SMD_DEMO_RANKS", "scripts: ranks of the demo"},
      {"SMD_COMPARE_SKIP", "bench scripts: peers to skip"},
      {"SMD_TEST_*", "tests: their own settings"},
      {"SMD_RS_TEST*", "rust tests: their own settings"},
  };
  return names;
}

bool is_foreign_param(const std::string &name) {
  for (const ForeignParam &f : foreign_params()) {
    std::string n = f.name;
    if (!n.empty() && n.back() == '*') {
      if (name.compare(0, n.size() - 1, n, 0, n.size() - 1) == 0) return true;
    } else if (name == n) {
      return true;
    }
  }
  return false;
}

ParamOrigin param_origin(const char *name) {
  return param_env(name) ? ParamOrigin::kEnvironment : ParamOrigin::kDefault;
}

const char *param_origin_name(ParamOrigin origin) {
  return origin == ParamOrigin::kEnvironment ? "environment" : "default";
}

std::optional<std::string> param_env(const char *name) {
  assert(find_param(name) != nullptr && "SMD_* variable missing from the registry");
  const char *v = getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

std::string param_string(const char *name) {
  if (auto v = param_env(name)) return *v;
  const ParamDef *d = find_param(name);
  return d ? d->default_value : "";
}

int64_t param_int(const char *name) {
  std::string s = param_string(name);
  if (s.empty()) return 0;
  errno = 0;
  char *end = nullptr;
  long long v = strtoll(s.c_str(), &end, 10);
  if (errno || end == s.c_str() || *end)
    fail(SMD_ERR_INVALID_ARGUMENT, "%s=%s is not an integer", name, s.c_str());
  return v;
}

int64_t param_seconds_ms(const char *name) {
  std::string s = param_string(name);
  errno = 0;
  char *end = nullptr;
  double v = strtod(s.c_str(), &end);
  if (errno || end == s.c_str() || *end || !std::isfinite(v) || v < 0)
    fail(SMD_ERR_INVALID_ARGUMENT, "%s=%s is not a number of seconds", name, s.c_str());
  // Longer than anyone waits, and short enough that a deadline of now +
  // this many nanoseconds cannot overflow (converting a larger double to
  // an integer is undefined; the fuzzer's first find).
  constexpr double kMaxSeconds = 1e9;
  if (v > kMaxSeconds) v = kMaxSeconds;
  return static_cast<int64_t>(v * 1000.0 + 0.5);
}

bool param_bool(const char *name) {
  std::string s = param_string(name);
  const char *v = s.c_str();
  if (!strcasecmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "true") ||
      !strcasecmp(v, "on"))
    return true;
  if (!strcasecmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "false") ||
      !strcasecmp(v, "off") || s.empty())
    return false;
  fail(SMD_ERR_INVALID_ARGUMENT, "%s=%s is not a boolean (use 1 or 0)", name, v);
}

}  // namespace smd
