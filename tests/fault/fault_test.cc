// Fault scenarios with real processes: each ends in a clear error on every
// surviving rank within its deadline, and leaves nothing in /dev/shm.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "free_port.h"

#ifndef FAULT_WORKER
#error FAULT_WORKER must name the worker executable
#endif

namespace {

// Every worker this test started: what smd's transports leave in /dev/shm
// (libfabric's shm regions, "PID:N:M") names the process.
std::set<pid_t> &workers_started() {
  static std::set<pid_t> pids;
  return pids;
}

bool made_by_a_worker(const std::string &name) {
  pid_t pid = static_cast<pid_t>(atol(name.c_str()));
  return name.find("smd") != std::string::npos || workers_started().count(pid) > 0;
}

std::set<std::string> dev_shm() {
  std::set<std::string> names;
  if (DIR *d = opendir("/dev/shm")) {
    while (dirent *e = readdir(d))
      if (e->d_name[0] != '.') names.insert(e->d_name);
    closedir(d);
  }
  return names;
}

// One the kernel just found free (a made-up port once collided with a
// socket left by an earlier test: rank 0 could not serve the store and the
// others waited out the limit).
int free_port() { return smdrun::pick_free_port("127.0.0.1"); }

struct Rank {
  pid_t pid = -1;
  int out_fd = -1;
  std::string output;
  int status = 0;
  double seconds = 0;
};

using Env = std::map<std::string, std::string>;

// Workers that hold (the "hold" argument) wait until their stdin ends:
// closing this releases them, whenever the test is ready, however slow
// the machine.
class Release {
 public:
  Release() {
    if (pipe2(fds_, O_CLOEXEC) != 0) abort();
  }
  ~Release() {
    now();
    if (fds_[0] >= 0) close(fds_[0]);
  }
  int read_end() const { return fds_[0]; }
  void now() {
    if (fds_[1] >= 0) close(fds_[1]);
    fds_[1] = -1;
  }

 private:
  int fds_[2] = {-1, -1};
};

// Starts `n` workers of a world of `world_size` ranks (ranks 0..n-1), with
// `env` and, on top, what `rank_env` returns for each rank. Their stdin is
// `release` (rank 0's is `release0` where given).
std::vector<Rank> launch(int n, int world_size, const std::vector<std::string> &args, Env env = {},
                         const Release *release = nullptr,
                         std::function<Env(int)> rank_env = nullptr,
                         const Release *release0 = nullptr) {
  int port = free_port();
  std::vector<Rank> ranks(n);
  for (int r = 0; r < n; ++r) {
    int pipefd[2];
    if (pipe(pipefd) != 0) abort();
    pid_t pid = fork();
    if (pid == 0) {
      if (const Release *mine = r == 0 && release0 ? release0 : release) dup2(mine->read_end(), 0);
      dup2(pipefd[1], 1);
      dup2(pipefd[1], 2);
      close(pipefd[0]);
      setenv("SMD_RANK", std::to_string(r).c_str(), 1);
      setenv("SMD_WORLD_SIZE", std::to_string(world_size).c_str(), 1);
      setenv("SMD_MASTER_ADDR", "127.0.0.1", 1);
      setenv("SMD_MASTER_PORT", std::to_string(port).c_str(), 1);
      setenv("SMD_JOB_TOKEN", "fault-test-token", 1);
      for (auto &[k, v] : env) setenv(k.c_str(), v.c_str(), 1);
      if (rank_env)
        for (auto &[k, v] : rank_env(r)) setenv(k.c_str(), v.c_str(), 1);
      std::vector<char *> argv;
      argv.push_back(const_cast<char *>(FAULT_WORKER));
      for (auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
      argv.push_back(nullptr);
      execv(FAULT_WORKER, argv.data());
      _exit(127);
    }
    close(pipefd[1]);
    fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
    ranks[r].pid = pid;
    workers_started().insert(pid);
    ranks[r].out_fd = pipefd[0];
  }
  return ranks;
}

// Waits for every rank (killing all at the limit) and collects output.
void collect(std::vector<Rank> &ranks, double limit_s) {
  auto t0 = std::chrono::steady_clock::now();
  size_t left = ranks.size();
  while (left) {
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (auto &r : ranks) {
      char buf[4096];
      ssize_t k;
      while (r.out_fd >= 0 && (k = read(r.out_fd, buf, sizeof buf)) > 0) r.output.append(buf, k);
      if (r.pid > 0 && waitpid(r.pid, &r.status, WNOHANG) == r.pid) {
        r.pid = -1;
        r.seconds = el;
        --left;
      }
    }
    if (el > limit_s) {
      for (auto &r : ranks)
        if (r.pid > 0) {
          kill(r.pid, SIGKILL);
          waitpid(r.pid, &r.status, 0);
          r.output += "\n[killed by the test after " + std::to_string(limit_s) + " s]";
          r.pid = -1;
          r.seconds = el;
          --left;
        }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (auto &r : ranks) {
    char buf[4096];
    ssize_t k;
    while ((k = read(r.out_fd, buf, sizeof buf)) > 0) r.output.append(buf, k);
    close(r.out_fd);
  }
}

// Reads the ranks' output until each chosen one (all by default) has
// printed `needle`, for at most limit_s seconds.
bool wait_for_output(std::vector<Rank> &ranks, const std::string &needle, double limit_s,
                     std::function<bool(int)> chosen = nullptr) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  for (;;) {
    size_t seen = 0, wanted = 0;
    for (size_t i = 0; i < ranks.size(); ++i) {
      Rank &r = ranks[i];
      char buf[4096];
      ssize_t k;
      while ((k = read(r.out_fd, buf, sizeof buf)) > 0) r.output.append(buf, k);
      if (chosen && !chosen(int(i))) continue;
      ++wanted;
      seen += r.output.find(needle) != std::string::npos;
    }
    if (seen == wanted) return true;
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Whether a process may read the memory of one that is not its descendant
// (as ranks, siblings, read each other's in the cma algorithms): a child
// reads its parent's.
bool cross_memory_allowed() {
  static volatile uint64_t word = 0x5eedf00d;
  pid_t parent = getpid(), child = fork();
  if (child == 0) {
    uint64_t got = 0;
    iovec local{&got, sizeof got}, remote{const_cast<uint64_t *>(&word), sizeof got};
    _exit(process_vm_readv(parent, &local, 1, &remote, 1, 0) == sizeof got && got == word ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool exited_ok(const Rank &r) { return WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0; }

class Fault : public ::testing::Test {
 protected:
  void SetUp() override { shm_before_ = dev_shm(); }
  // Only what the workers left counts: other programs on the machine (an
  // Open MPI job's segments) may add or remove theirs meanwhile.
  void TearDown() override {
    std::set<std::string> appeared;
    for (const std::string &name : dev_shm())
      if (!shm_before_.count(name) && made_by_a_worker(name)) appeared.insert(name);
    EXPECT_TRUE(appeared.empty()) << "left in /dev/shm: " << *appeared.begin();
  }
  std::set<std::string> shm_before_;
};

TEST_F(Fault, RankThatNeverJoins) {
  auto ranks = launch(2, 3, {"never_joins"}, {{"SMD_TIMEOUT", "3"}});
  collect(ranks, 30);
  for (auto &r : ranks) {
    EXPECT_TRUE(exited_ok(r)) << r.output;
    EXPECT_NE(r.output.find("SMD_ERR_TIMEOUT"), std::string::npos) << r.output;
    EXPECT_LT(r.seconds, 15.0) << r.output;
  }
  // Rank 0 gathers the rendezvous: it can say exactly who is missing.
  EXPECT_NE(ranks[0].output.find("never joined: 2"), std::string::npos) << ranks[0].output;
}

TEST_F(Fault, RankKilledInCollective) {
  for (int victim : {2, 0}) {
    SCOPED_TRACE("victim rank " + std::to_string(victim));
    auto ranks = launch(3, 3, {"killed", std::to_string(victim)}, {{"SMD_TIMEOUT", "60"}});
    collect(ranks, 40);
    for (int r = 0; r < 3; ++r) {
      if (r == victim) {
        EXPECT_TRUE(WIFSIGNALED(ranks[r].status) && WTERMSIG(ranks[r].status) == SIGKILL);
        continue;
      }
      EXPECT_TRUE(exited_ok(ranks[r])) << ranks[r].output;
      EXPECT_NE(ranks[r].output.find("SMD_ERR_PEER_FAILURE"), std::string::npos) << ranks[r].output;
      EXPECT_NE(ranks[r].output.find("rank " + std::to_string(victim)), std::string::npos)
          << ranks[r].output;
      EXPECT_LT(ranks[r].seconds, 15.0) << "not within a few seconds: " << ranks[r].output;
    }
  }
}

// A rank killed while its peers copy its buffers with cross-memory reads
// (the cma algorithms, forced): each survivor ends in SMD_ERR_PEER_FAILURE
// naming it, whether a read found it gone (process_vm_readv: ESRCH) or a
// wait did, and never crashes or hangs. The victim dies as its 4th
// collective of the loop (an allgather) or its 7th (a broadcast it roots)
// starts, after the first iteration printed the algorithm.
TEST_F(Fault, RankKilledDuringCrossMemoryReads) {
  for (int at_call : {3, 6}) {
    SCOPED_TRACE("killed at collective " + std::to_string(at_call) + " of the loop");
    const int victim = 1;
    auto ranks = launch(3, 3, {"killed_cma", std::to_string(victim), std::to_string(at_call)},
                        {{"SMD_TIMEOUT", "60"}, {"SMD_ALGO", "allgather=cma,broadcast=cma"}});
    collect(ranks, 40);
    for (int r = 0; r < 3; ++r) {
      if (r == victim) {
        EXPECT_TRUE(WIFSIGNALED(ranks[r].status) && WTERMSIG(ranks[r].status) == SIGKILL)
            << ranks[r].output;
        continue;
      }
      EXPECT_TRUE(exited_ok(ranks[r])) << ranks[r].output;
      // The first iteration completed; forced cma ran (unless the machine
      // forbids cross-memory reads).
      EXPECT_NE(ranks[r].output.find("ALGO "), std::string::npos) << ranks[r].output;
      if (cross_memory_allowed()) {
        EXPECT_NE(ranks[r].output.find("ALGO cma"), std::string::npos) << ranks[r].output;
      }
      EXPECT_NE(ranks[r].output.find("SMD_ERR_PEER_FAILURE"), std::string::npos) << ranks[r].output;
      EXPECT_NE(ranks[r].output.find("rank " + std::to_string(victim)), std::string::npos)
          << ranks[r].output;
      EXPECT_LT(ranks[r].seconds, 15.0) << "not within a few seconds: " << ranks[r].output;
    }
  }
}

// 4 ranks on 2 fake nodes (SMD_NODE_ID, local rank and size as smdrun
// --nodes 2 sets them), shm inside each node and tcp between, so the
// allreduce is hierarchical. A rank killed on one node mid-allreduce (4 MiB)
// ends every survivor of both nodes in SMD_ERR_PEER_FAILURE naming it, well
// within 2 x SMD_TIMEOUT, and the shared memory of both nodes goes with the
// job. Survivors keep their connections open after their error until
// every survivor has reported, so that none learns of the failure from
// another survivor's exit: the ranks that never talk to the victim
// directly (its rail peer's node mate) must hear of it from smd itself.
TEST_F(Fault, RankKilledInHierarchicalAllreduce) {
  const int kTimeout = 30;
  auto on_node = [](int r) {
    return Env{{"SMD_NODE_ID", "fault-node" + std::to_string(r / 2)},
               {"SMD_LOCAL_RANK", std::to_string(r % 2)},
               {"SMD_LOCAL_SIZE", "2"}};
  };
  for (int victim : {3, 0}) {  // a rank of node 1; rank 0 of node 0, which serves the store
    SCOPED_TRACE("victim rank " + std::to_string(victim));
    Release release;
    auto ranks = launch(4, 4, {"killed_large", std::to_string(victim), "hold"},
                        {{"SMD_TRANSPORT", "shm+tcp"}, {"SMD_TIMEOUT", std::to_string(kTimeout)}},
                        &release, on_node);
    EXPECT_TRUE(wait_for_output(ranks, "RESULT", 3 * kTimeout, [victim](int r) {
      return r != victim;
    })) << "not every survivor reported";
    release.now();
    collect(ranks, 3 * kTimeout);
    for (int r = 0; r < 4; ++r) {
      const std::string &out = ranks[r].output;
      EXPECT_NE(out.find("ALGO hierarchical"), std::string::npos) << out;
      if (r == victim) {
        EXPECT_TRUE(WIFSIGNALED(ranks[r].status) && WTERMSIG(ranks[r].status) == SIGKILL) << out;
        continue;
      }
      EXPECT_TRUE(exited_ok(ranks[r])) << "no SMD_ERR_PEER_FAILURE: " << out;
      size_t at = out.find("RESULT SMD_ERR_PEER_FAILURE");
      ASSERT_NE(at, std::string::npos) << out;
      // RESULT <code> <seconds in the failed call> <message>
      double call_s = atof(out.c_str() + out.find(' ', at + 7));
      std::string message = out.substr(at, out.find('\n', at) - at);
      EXPECT_LT(call_s, 2.0 * kTimeout) << out;
      EXPECT_NE(message.find("rank " + std::to_string(victim) + " "), std::string::npos)
          << "the error does not name the killed rank: " << out;
    }
  }
}

TEST_F(Fault, TimeoutNamesTheMissingRank) {
  // Rank 1 stays out of the collective, alive, until rank 0 has finished.
  Release release;
  auto ranks = launch(2, 2, {"timeout"}, {{"SMD_TIMEOUT", "2"}}, &release);
  std::vector<Rank> first{ranks[0]}, absent{ranks[1]};
  collect(first, 60);
  release.now();
  collect(absent, 60);
  EXPECT_TRUE(exited_ok(first[0])) << first[0].output;
  EXPECT_TRUE(exited_ok(absent[0])) << absent[0].output;
  EXPECT_NE(first[0].output.find("SMD_ERR_TIMEOUT"), std::string::npos) << first[0].output;
  EXPECT_NE(first[0].output.find("ranks that have not reached the last step: 1\n"),
            std::string::npos)
      << first[0].output;
}

// The ranks named in a timeout message after `intro`, each once.
std::vector<int> ranks_named(const std::string &out, const std::string &intro) {
  std::vector<int> named;
  size_t at = out.find(intro);
  if (at == std::string::npos) return named;
  std::string list = out.substr(at + intro.size(), out.find('\n', at) - at - intro.size());
  for (size_t i = 0; i < list.size();) {
    if (isdigit(static_cast<unsigned char>(list[i]))) {
      named.push_back(atoi(list.c_str() + i));
      while (i < list.size() && isdigit(static_cast<unsigned char>(list[i]))) ++i;
    } else if (list.compare(i, 13, " (world rank ") == 0) {
      i = list.find(')', i) + 1;  // the world number of a rank already named
    } else {
      ++i;
    }
  }
  return named;
}

// Every rank its own node: SMD_NODE_ID as smdrun --nodes sets it.
Env own_node(int r) { return {{"SMD_NODE_ID", "node" + std::to_string(r)}}; }

// Timeout messages name each missing rank once (a run of 32 ranks once
// repeated rank 0 31 times): on the arena and over tcp.
TEST_F(Fault, TimeoutListsEachMissingRankOnce) {
  for (bool tcp : {false, true}) {
    Release release;
    Env env{{"SMD_TIMEOUT", "2"}};
    if (tcp) env["SMD_TRANSPORT"] = "tcp";
    auto ranks = launch(4, 4, {"timeout"}, env, &release, tcp ? own_node : nullptr);
    std::vector<Rank> first{ranks[0]}, absent(ranks.begin() + 1, ranks.end());
    collect(first, 60);
    release.now();
    collect(absent, 60);
    const std::string &out = first[0].output;
    EXPECT_NE(out.find("SMD_ERR_TIMEOUT"), std::string::npos) << out;
    std::vector<int> named = ranks_named(
        out, tcp ? "still waiting for ranks" : "ranks that have not reached the last step:");
    ASSERT_FALSE(named.empty()) << out;
    std::set<int> unique(named.begin(), named.end());
    EXPECT_EQ(unique.size(), named.size()) << "a rank named twice: " << out;
    EXPECT_EQ(unique.count(0), 0u) << "the waiting rank named itself: " << out;
    if (!tcp) EXPECT_EQ(named, (std::vector<int>{1, 2, 3})) << out;
  }
}

// A network plugin the build made, on SMD_PLUGIN_PATH.
bool plugin_built(const std::string &name) {
  const char *path = getenv("SMD_PLUGIN_PATH");
  std::string p = path ? path : "";
  for (size_t i = 0; i <= p.size();) {
    size_t end = p.find(':', i);
    if (end == std::string::npos) end = p.size();
    std::string dir = p.substr(i, end - i);
    if (access((dir + "/libsmd-transport-" + name + ".so").c_str(), R_OK) == 0) return true;
    i = end + 1;
  }
  return false;
}

// The "abort" scenario, in order: rank 0 aborts its waiting allreduce and
// reports; then the peer is released to make its call and reports; then
// rank 0 is released to finish. Both calls end in SMD_ERR_ABORTED within
// seconds (each RESULT line carries its call's time).
void expect_abort_reaches_the_peer(const Env &env, std::function<Env(int)> rank_env = nullptr) {
  Release peer, first;
  auto ranks = launch(2, 2, {"abort"}, env, &peer, rank_env, &first);
  EXPECT_TRUE(wait_for_output(ranks, "RESULT", 30, [](int r) { return r == 0; }));
  peer.now();
  EXPECT_TRUE(wait_for_output(ranks, "RESULT", 30));
  first.now();
  collect(ranks, 30);
  for (auto &r : ranks) {
    EXPECT_TRUE(exited_ok(r)) << r.output;
    size_t at = r.output.find("RESULT SMD_ERR_ABORTED");
    ASSERT_NE(at, std::string::npos) << r.output;
    double call_s = atof(r.output.c_str() + r.output.find(' ', at + 7));
    EXPECT_LT(call_s, 10.0) << r.output;
  }
}

// smd_comm_abort on rank 0 over each network plugin (every rank its own
// node): the peer's matching allreduce ends with SMD_ERR_ABORTED too,
// though rank 0's data had left before the abort (it once returned
// SMD_SUCCESS over tcp).
TEST_F(Fault, AbortReachesThePeerOverEachNetwork) {
  for (std::string transport : {"tcp", "ucx", "efa"}) {
    if (!plugin_built(transport)) continue;
    SCOPED_TRACE(transport);
    Env env{{"SMD_TIMEOUT", "30"},
            {"SMD_TRANSPORT", transport},
            {"UCX_TLS", "tcp"},
            {"SMD_EFA_PROVIDER", "tcp;ofi_rxm"}};
    expect_abort_reaches_the_peer(env, own_node);
  }
}

TEST_F(Fault, AbortUnblocksPendingCallsOnEveryRank) {
  expect_abort_reaches_the_peer({{"SMD_TIMEOUT", "30"}});
}

TEST_F(Fault, StrayClientWithWrongTokenIsRefused) {
  // A healthy job holds the port; a process of another job knocks.
  // It holds the port from its first collective until the stray is done.
  int port = free_port();
  std::string p = std::to_string(port);
  Release release;
  auto job = launch(2, 2, {"ok", "hold"}, {{"SMD_MASTER_PORT", p}}, &release);
  ASSERT_TRUE(wait_for_output(job, "RESULT", 60)) << job[0].output << job[1].output;
  auto stray = launch(1, 2, {"stray"},
                      {{"SMD_MASTER_PORT", p},
                       {"SMD_JOB_TOKEN", "another-job"},
                       {"SMD_RANK", "1"},
                       {"SMD_TIMEOUT", "20"}});
  collect(stray, 30);
  release.now();
  collect(job, 30);
  EXPECT_TRUE(exited_ok(stray[0])) << stray[0].output;
  EXPECT_NE(stray[0].output.find("SMD_ERR_BOOTSTRAP"), std::string::npos) << stray[0].output;
  EXPECT_LT(stray[0].seconds, 10.0) << stray[0].output;
  for (auto &r : job) EXPECT_TRUE(exited_ok(r)) << "the job was disturbed: " << r.output;
}

}  // namespace
