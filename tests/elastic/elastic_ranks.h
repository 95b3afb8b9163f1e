// Real processes for the elastic tests: ranks forked from a gtest test
// (before any smd call there), their steps ordered with pipes (never with
// sleeps), their results reported through their exit status.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <signal.h>
#include <smd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "../../src/tool_support/callback_store.h"
#include "free_port.h"

namespace elastic_test {

// A rank's failure: the message on stderr, a distinct exit status.
#define CHECK_RANK(cond, ...)                                                            \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      fprintf(stderr, "rank %d: check failed at line %d: %s: ", rank_, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                                      \
      fprintf(stderr, " (last error: %s)\n", smd_last_error());                          \
      _exit(10);                                                                         \
    }                                                                                    \
  } while (0)

inline int rank_ = -1;

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (pipe(fd) != 0) abort();
  }
  void put() {
    char c = 1;
    if (write(fd[1], &c, 1) != 1) abort();
  }
  // Blocks until a byte comes (or every writer closed: false).
  bool take() {
    char c;
    return read(fd[0], &c, 1) == 1;
  }
  void close_writer() {
    if (fd[1] >= 0) close(fd[1]);
    fd[1] = -1;
  }
};

// Ranks wait here before they leave: the first to leave would take the
// store (rank 0) or its connections with it while others still work. The
// test closes it once every rank has arrived.
struct Leave {
  Pipe p;
  void wait() {
    p.close_writer();  // the rank's own copy of the write end
    if (p.take()) abort();
  }
};

struct Job {
  std::vector<pid_t> pids;
  std::vector<int> status;  // of ranks that ended, by rank
  Pipe arrived;             // every rank puts a byte when it reaches a step
  Leave leave;
  int port = 0;  // the store's
  // Forks `n` ranks running body(rank); the transport and nodes from `env`.
  void start(int n, const std::vector<std::pair<std::string, std::string>> &env, int ranks_per_node,
             const std::function<void(int)> &body) {
    port = smdrun::pick_free_port("127.0.0.1");
    for (int r = 0; r < n; ++r) {
      pid_t pid = fork();
      if (pid == 0) {
        rank_ = r;
        setenv("SMD_RANK", std::to_string(r).c_str(), 1);
        setenv("SMD_WORLD_SIZE", std::to_string(n).c_str(), 1);
        setenv("SMD_MASTER_ADDR", "127.0.0.1", 1);
        setenv("SMD_MASTER_PORT", std::to_string(port).c_str(), 1);
        setenv("SMD_JOB_TOKEN", "elastic-test-token", 1);
        if (ranks_per_node > 0)
          setenv("SMD_NODE_ID", ("node" + std::to_string(r / ranks_per_node)).c_str(), 1);
        for (auto &[k, v] : env) setenv(k.c_str(), v.c_str(), 1);
        body(r);
        _exit(0);
      }
      pids.push_back(pid);
      status.push_back(-1);
    }
  }
  // Forks a process that is no rank of the job (it joins a grow; its index
  // in pids is returned), with the job's store and `env`; node_id "" for
  // the machine's own node.
  int start_joiner(const std::vector<std::pair<std::string, std::string>> &env,
                   const std::string &node_id, const std::function<void(int)> &body) {
    int index = static_cast<int>(pids.size());
    pid_t pid = fork();
    if (pid == 0) {
      rank_ = index;
      unsetenv("SMD_RANK");
      unsetenv("SMD_WORLD_SIZE");
      setenv("SMD_MASTER_ADDR", "127.0.0.1", 1);
      setenv("SMD_MASTER_PORT", std::to_string(port).c_str(), 1);
      setenv("SMD_JOB_TOKEN", "elastic-test-token", 1);
      if (!node_id.empty()) setenv("SMD_NODE_ID", node_id.c_str(), 1);
      for (auto &[k, v] : env) setenv(k.c_str(), v.c_str(), 1);
      body(index);
      _exit(0);
    }
    pids.push_back(pid);
    status.push_back(-1);
    return index;
  }
  static int decode(int st) { return WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st); }
  // Exit status of rank r (waits for it); -SIG when killed by a signal.
  int finish(int r) {
    if (pids[size_t(r)] > 0) {
      int st = 0;
      waitpid(pids[size_t(r)], &st, 0);
      pids[size_t(r)] = -1;
      status[size_t(r)] = decode(st);
    }
    return status[size_t(r)];
  }
  // Reads n arrivals; false when a rank ended first (it failed: its exit
  // status says how) or two minutes passed.
  bool await_arrivals(int n) {
    auto until = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (n > 0) {
      pollfd p{arrived.fd[0], POLLIN, 0};
      if (poll(&p, 1, 50) == 1) {
        if (!arrived.take()) return false;
        --n;
        continue;
      }
      for (size_t r = 0; r < pids.size(); ++r) {
        int st = 0;
        if (pids[r] > 0 && waitpid(pids[r], &st, WNOHANG) == pids[r]) {
          pids[r] = -1;
          status[r] = decode(st);
          return false;
        }
      }
      if (std::chrono::steady_clock::now() > until) return false;
    }
    return true;
  }
  void kill_rank(int r) {
    kill(pids[size_t(r)], SIGKILL);
    finish(r);
  }
  ~Job() {
    for (pid_t p : pids)
      if (p > 0) {
        kill(p, SIGKILL);
        waitpid(p, nullptr, 0);
      }
  }
};

// A rank's end: it reports its arrival, waits for the test's leave, then
// destroys its communicators (shrunk may be NULL).
inline void arrive_and_leave(Job &job, smd_comm_t *shrunk, smd_comm_t *world) {
  job.arrived.put();
  job.leave.wait();
  if (shrunk)
    CHECK_RANK(smd_comm_destroy(shrunk) == SMD_SUCCESS, "destroy the shrunk communicator");
  CHECK_RANK(smd_comm_destroy(world) == SMD_SUCCESS, "destroy the world");
}

inline smd_comm_t *init_world() {
  smd_comm_t *world = nullptr;
  smd_result_t rc = smd_comm_init(nullptr, &world);
  CHECK_RANK(rc == SMD_SUCCESS, "smd_comm_init: %s", smd_result_string(rc));
  return world;
}

// Sum of `value` over the communicator, checked against `want`.
inline void expect_sum(smd_comm_t *comm, int64_t value, int64_t want) {
  int64_t got = 0;
  smd_result_t rc = smd_allreduce(&value, &got, 1, SMD_INT64, SMD_SUM, comm, nullptr);
  CHECK_RANK(rc == SMD_SUCCESS, "allreduce: %s", smd_result_string(rc));
  CHECK_RANK(got == want, "allreduce gave %lld, want %lld", (long long)got, (long long)want);
}

struct Transport {
  const char *name;
  std::vector<std::pair<std::string, std::string>> env;
  int ranks_per_node;  // fake nodes as smdrun --nodes makes them; 0: one node
};

// One node (the shared-memory arena), every rank its own node over tcp,
// and two nodes of two (hierarchical: shm inside a node, tcp between).
inline std::vector<Transport> transports() {
  return {{"shm", {{"SMD_TIMEOUT", "30"}}, 0},
          {"tcp", {{"SMD_TIMEOUT", "30"}, {"SMD_TRANSPORT", "tcp"}}, 1},
          {"shm+tcp, 2 nodes",
           {{"SMD_TIMEOUT", "30"},
            {"SMD_TRANSPORT", "shm+tcp"},
            {"SMD_ALGO", "allreduce=hierarchical"}},
           2}};
}

inline bool plugin_built(const std::string &name) {
  std::string path = getenv("SMD_PLUGIN_PATH") ? getenv("SMD_PLUGIN_PATH") : "";
  for (size_t i = 0; i <= path.size();) {
    size_t end = path.find(':', i);
    if (end == std::string::npos) end = path.size();
    if (access((path.substr(i, end - i) + "/libsmd-transport-" + name + ".so").c_str(), R_OK) == 0)
      return true;
    i = end + 1;
  }
  return false;
}

// transports() and, where built, the ucx and efa plugins (over TCP
// sockets: UCX_TLS=tcp, libfabric's tcp provider), every rank its own node.
inline std::vector<Transport> with_network_plugins() {
  std::vector<Transport> all = transports();
  for (const char *name : {"ucx", "efa"})
    if (plugin_built(name))
      all.push_back({name,
                     {{"SMD_TIMEOUT", "30"},
                      {"SMD_TRANSPORT", name},
                      {"UCX_TLS", "tcp"},
                      {"SMD_EFA_PROVIDER", "tcp;ofi_rxm"}},
                     1});
  return all;
}

// A store shared by the ranks through files in a directory, injected
// through smd_store_ops_t: it outlives any rank (so losing world rank 0 is
// survivable) and, like most framework stores, cannot say which keys exist
// or which ranks died (agreement then reads slots with short waits and
// learns of deaths from the transports).
// A fresh directory under /tmp, removed with its files when the test is
// done (in the process that made it: forked ranks leave with _exit).
struct TempDir {
  std::string path;
  explicit TempDir(const char *prefix) {
    std::string pattern = std::string("/tmp/") + prefix + "-XXXXXX";
    if (mkdtemp(pattern.data())) path = pattern;
  }
  ~TempDir() {
    if (path.empty()) return;
    if (DIR *d = opendir(path.c_str())) {
      while (dirent *e = readdir(d))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
          unlink((path + "/" + e->d_name).c_str());
      closedir(d);
    }
    rmdir(path.c_str());
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
};

struct FileStore : teststore::CallbackStore<FileStore> {
  TempDir files{"smd-elastic-store"};
  std::string dir = files.path;
  // When set, the process kills itself (SIGKILL) right after it wrote a
  // key containing this: a death at an exact step of a protocol.
  std::string die_after_writing = {};

  std::string path(const char *key) const {
    std::string p = dir + "/";
    for (const char *c = key; *c; ++c) {
      char hex[3];
      snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(*c));
      p += hex;
    }
    return p;
  }
  static bool write_file(const std::string &path, const void *value, size_t size) {
    std::string tmp = path + ".tmp" + std::to_string(getpid());
    FILE *f = fopen(tmp.c_str(), "wb");
    if (!f) return false;
    bool ok = fwrite(value, 1, size, f) == size;
    ok = fclose(f) == 0 && ok;
    return ok && rename(tmp.c_str(), path.c_str()) == 0;  // readers see all of it or nothing
  }
  static bool read_file(const std::string &path, std::string *out) {
    FILE *f = fopen(path.c_str(), "rb");
    if (!f) return false;
    char buf[4096];
    size_t n;
    out->clear();
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) out->append(buf, n);
    fclose(f);
    return true;
  }
  static smd_result_t set(void *user, const char *key, const void *value, size_t size, char *error,
                          size_t error_size) {
    FileStore &s = of(user);
    if (write_file(s.path(key), value, size)) {
      if (!s.die_after_writing.empty() && strstr(key, s.die_after_writing.c_str()))
        kill(getpid(), SIGKILL);
      return SMD_SUCCESS;
    }
    snprintf(error, error_size, "cannot write key %s", key);
    return SMD_ERR_SYSTEM;
  }
  static smd_result_t get(void *user, const char *key, int64_t timeout_ms, void **value,
                          size_t *size, char *error, size_t error_size) {
    auto until = teststore::deadline_of(timeout_ms);
    std::string got;
    while (!read_file(of(user).path(key), &got)) {
      if (std::chrono::steady_clock::now() >= until) {
        snprintf(error, error_size, "no key %s", key);
        return SMD_ERR_TIMEOUT;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));  // polling a file, not deciding
    }
    return teststore::hand_out(got.data(), got.size(), value, size);
  }
  static smd_result_t add(void *user, const char *key, int64_t delta, int64_t *new_value,
                          char *error, size_t error_size) {
    FileStore &s = of(user);
    int lock = open((s.dir + "/lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    if (lock < 0 || flock(lock, LOCK_EX) != 0) {
      snprintf(error, error_size, "cannot lock the store");
      if (lock >= 0) close(lock);
      return SMD_ERR_SYSTEM;
    }
    std::string path = s.path(key), text;
    int64_t v = read_file(path, &text) ? strtoll(text.c_str(), nullptr, 10) : 0;
    v += delta;
    text = std::to_string(v);
    bool ok = write_file(path, text.data(), text.size());
    close(lock);  // releases the lock
    if (!ok) {
      snprintf(error, error_size, "cannot write key %s", key);
      return SMD_ERR_SYSTEM;
    }
    *new_value = v;
    return SMD_SUCCESS;
  }
};

// A world formed through `store` (a rank's process: the ops stay alive).
inline smd_comm_t *init_world(FileStore &store) {
  static smd_store_ops_t ops;
  ops = store.ops();
  smd_init_options_t options = SMD_INIT_OPTIONS_INIT;
  options.store = &ops;
  smd_comm_t *world = nullptr;
  smd_result_t rc = smd_comm_init(&options, &world);
  CHECK_RANK(rc == SMD_SUCCESS, "init with the file store: %s", smd_result_string(rc));
  return world;
}

}  // namespace elastic_test
