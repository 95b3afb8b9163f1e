// The rendezvous as jobs meet it, with real processes: forming a world
// again and again on one port, two worlds in one process, a port torch
// already holds, and strangers on the host that try to join as a rank or
// to use up rank 0's file descriptors.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <map>
#include <string>
#include <vector>

#include "core/bootstrap/store_protocol.h"

#ifndef RENDEZVOUS_WORKER
#error RENDEZVOUS_WORKER must name the worker executable
#endif

namespace {

using Env = std::map<std::string, std::string>;
constexpr double kLimitS = 120;

// A port the kernel just found free, whose successor is free too (smd
// serves beside torch's MASTER_PORT on the next one).
int free_port_pair() {
  for (int attempt = 0; attempt < 100; ++attempt) {
    int fds[2] = {socket(AF_INET, SOCK_STREAM, 0), socket(AF_INET, SOCK_STREAM, 0)};
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    bind(fds[0], reinterpret_cast<sockaddr *>(&a), sizeof a);
    getsockname(fds[0], reinterpret_cast<sockaddr *>(&a), &len);
    int port = ntohs(a.sin_port);
    a.sin_port = htons(static_cast<uint16_t>(port + 1));
    bool next_free = port < 65535 && bind(fds[1], reinterpret_cast<sockaddr *>(&a), sizeof a) == 0;
    close(fds[0]);
    close(fds[1]);
    if (next_free) return port;
  }
  ADD_FAILURE() << "no pair of free ports";
  return 0;
}

int raw_connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// The store's one answer to a HELLO from a stranger (nullopt: none came).
std::optional<smd::wire::Message> hello_as_stranger(int port, const std::string &token, int rank,
                                                    int world_size) {
  int fd = raw_connect(port);
  if (fd < 0) return std::nullopt;
  smd::wire::Message m;
  m.op = smd::wire::Op::kHello;
  m.token = token;
  m.rank = rank;
  m.world_size = world_size;
  m.epoch = 1;
  smd::Bytes frame = smd::wire::encode(m);
  (void)!write(fd, frame.data(), frame.size());
  smd::Bytes in;
  uint8_t buf[4096];
  size_t size = 0;
  pollfd p{fd, POLLIN, 0};
  while (poll(&p, 1, 60000) > 0) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    in.insert(in.end(), buf, buf + n);
    if ((size = smd::wire::frame_size(in.data(), in.size(), smd::wire::kMaxFrame))) break;
  }
  close(fd);
  if (!size) return std::nullopt;
  return smd::wire::decode(in.data(), size);
}

struct Rank {
  pid_t pid = -1;
  int out = -1;      // its stdout and stderr
  int stdin_w = -1;  // closing it releases a holding rank
  std::string output;
  int status = -1;
};

class Job {
 public:
  Job(int n, const std::vector<std::string> &args, const std::function<Env(int)> &env) {
    for (int r = 0; r < n; ++r) {
      int out[2], in[2];
      if (pipe2(out, O_CLOEXEC) != 0 || pipe2(in, O_CLOEXEC) != 0) abort();
      pid_t pid = fork();
      if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(out[1], 2);
        for (auto &[k, v] : env(r)) setenv(k.c_str(), v.c_str(), 1);
        std::vector<char *> argv{const_cast<char *>(RENDEZVOUS_WORKER)};
        for (auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
        argv.push_back(nullptr);
        execv(RENDEZVOUS_WORKER, argv.data());
        _exit(127);
      }
      close(out[1]);
      close(in[0]);
      ranks_.push_back({pid, out[0], in[1], "", -1});
    }
  }
  ~Job() {
    for (auto &r : ranks_) {
      if (r.status < 0) {
        kill(r.pid, SIGKILL);
        waitpid(r.pid, nullptr, 0);
      }
      close(r.out);
      if (r.stdin_w >= 0) close(r.stdin_w);
    }
  }

  // Reads output until every rank printed `line` (true) or one exited
  // or the limit passed (false).
  bool wait_for_line(const std::string &line) {
    auto t0 = std::chrono::steady_clock::now();
    for (;;) {
      bool all = true;
      for (auto &r : ranks_) {
        pump(r, 100);
        all = all && r.output.find(line + "\n") != std::string::npos;
      }
      if (all) return true;
      for (auto &r : ranks_)
        if (waitpid(r.pid, &r.status, WNOHANG) == r.pid) return false;
      if (std::chrono::steady_clock::now() - t0 > std::chrono::duration<double>(kLimitS))
        return false;
    }
  }

  void release() {
    for (auto &r : ranks_) {
      close(r.stdin_w);
      r.stdin_w = -1;
    }
  }

  // Waits for every rank to exit; true if all exited 0.
  bool finish() {
    release();
    auto t0 = std::chrono::steady_clock::now();
    bool ok = true;
    for (auto &r : ranks_) {
      while (r.status < 0) {
        pump(r, 100);
        if (waitpid(r.pid, &r.status, WNOHANG) == r.pid) break;
        if (std::chrono::steady_clock::now() - t0 > std::chrono::duration<double>(kLimitS)) {
          kill(r.pid, SIGKILL);
          waitpid(r.pid, &r.status, 0);
        }
      }
      while (pump(r, 0)) {
      }
      ok = ok && WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0;
    }
    return ok;
  }

  std::string output() const {
    std::string all;
    for (size_t i = 0; i < ranks_.size(); ++i)
      all += "--- rank " + std::to_string(i) + " ---\n" + ranks_[i].output;
    return all;
  }

 private:
  static bool pump(Rank &r, int timeout_ms) {
    pollfd p{r.out, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0) return false;
    char buf[4096];
    ssize_t n = read(r.out, buf, sizeof buf);
    if (n <= 0) return false;
    r.output.append(buf, n);
    return true;
  }
  std::vector<Rank> ranks_;
};

class Rendezvous : public ::testing::Test {
 protected:
  Rendezvous() {
    char tmpl[] = "/tmp/smd-rdv-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    notes_ = dir_ + "/notes";
  }
  ~Rendezvous() override { std::filesystem::remove_all(dir_); }

  // What smdrun gives each rank: a port and a secret.
  Env smd_env(int rank, int size, int port) {
    return {{"SMD_RANK", std::to_string(rank)},   {"SMD_WORLD_SIZE", std::to_string(size)},
            {"SMD_MASTER_ADDR", "127.0.0.1"},     {"SMD_MASTER_PORT", std::to_string(port)},
            {"SMD_JOB_TOKEN", "rendezvous-test"}, {"SMD_RENDEZVOUS_DIR", notes_}};
  }
  // What torchrun gives each rank: no secret; its agent's store is on
  // MASTER_PORT.
  Env torchrun_env(int rank, int size, int port) {
    return {{"RANK", std::to_string(rank)},       {"WORLD_SIZE", std::to_string(size)},
            {"LOCAL_RANK", std::to_string(rank)}, {"LOCAL_WORLD_SIZE", std::to_string(size)},
            {"MASTER_ADDR", "127.0.0.1"},         {"MASTER_PORT", std::to_string(port)},
            {"TORCHELASTIC_RUN_ID", "none"},      {"SMD_RENDEZVOUS_DIR", notes_}};
  }

  std::string dir_, notes_;
};

int cycles_wanted() {
  const char *v = getenv("RDV_TEST_CYCLES");
  return v ? atoi(v) : 20;
}

TEST_F(Rendezvous, InitDestroyInitOnOnePort) {
  int port = free_port_pair();
  Job job(3, {"cycles", std::to_string(cycles_wanted())},
          [&](int r) { return smd_env(r, 3, port); });
  EXPECT_TRUE(job.finish()) << job.output();
}

TEST_F(Rendezvous, InitDestroyInitWithoutASecretUnderTorchrun) {
  int port = free_port_pair();
  Job job(2, {"cycles", "5"}, [&](int r) { return torchrun_env(r, 2, port); });
  EXPECT_TRUE(job.finish()) << job.output();
}

TEST_F(Rendezvous, TwoWorldsInOneProcess) {
  int port = free_port_pair();
  Job job(2, {"two_worlds"}, [&](int r) { return smd_env(r, 2, port); });
  EXPECT_TRUE(job.finish()) << job.output();
}

TEST_F(Rendezvous, TorchrunPortHeldByAnotherListener) {
  int port = free_port_pair();
  // torchrun's agent (or init_process_group) serves its store there.
  int agent = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  ASSERT_EQ(bind(agent, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
  ASSERT_EQ(listen(agent, 16), 0);
  Job job(2, {"cycles", "2"}, [&](int r) { return torchrun_env(r, 2, port); });
  EXPECT_TRUE(job.finish()) << job.output();
  close(agent);
}

TEST_F(Rendezvous, StrangersWithoutTheTokenAreRefused) {
  int port = free_port_pair();
  Job job(2, {"hold"}, [&](int r) { return torchrun_env(r, 2, port); });
  ASSERT_TRUE(job.wait_for_line("READY")) << job.output();
  // The token smd drew is in a note only this user can read.
  struct stat st {};
  ASSERT_EQ(stat(notes_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  int notes = 0;
  for (auto &e : std::filesystem::directory_iterator(notes_)) {
    ASSERT_EQ(stat(e.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u) << e.path();
    // The node calibration's cache shares the directory (private too).
    if (e.path().filename().string().rfind("smd-calibration-", 0) != 0) ++notes;
  }
  EXPECT_EQ(notes, 1);
  // What an outsider could guess: no token, the run id, the port.
  for (const std::string &guess : std::vector<std::string>{"", "none", std::to_string(port)}) {
    for (int rank : {0, 1}) {
      auto reply = hello_as_stranger(port + 1, guess, rank, 2);
      ASSERT_TRUE(reply) << "no answer to token '" << guess << "'";
      EXPECT_EQ(reply->op, smd::wire::Op::kError) << guess;
      EXPECT_NE(reply->reason.find("token mismatch"), std::string::npos) << reply->reason;
    }
  }
  EXPECT_TRUE(job.finish()) << job.output();
}

TEST_F(Rendezvous, UnauthenticatedFloodDoesNotStarveRankZero) {
  int port = free_port_pair();
  Job job(2, {"hold"}, [&](int r) {
    Env e = smd_env(r, 2, port);
    if (r == 0) e["RDV_TEST_NOFILE"] = "64";
    return e;
  });
  ASSERT_TRUE(job.wait_for_line("READY")) << job.output();
  std::vector<int> silent;
  for (int i = 0; i < 200; ++i) {
    int fd = raw_connect(port);
    if (fd >= 0) silent.push_back(fd);
  }
  // They stay silent while the job duplicates its world and reduces.
  EXPECT_TRUE(job.finish()) << job.output();
  for (int fd : silent) close(fd);
}

TEST_F(Rendezvous, MpirunAcrossHostsFindsTheStoreWithoutMasterAddr) {
  int port = free_port_pair();
  Job job(2, {"cycles", "2"}, [&](int r) {
    // One rank per host as far as Open MPI says: no address is implied.
    return Env{{"OMPI_COMM_WORLD_RANK", std::to_string(r)},
               {"OMPI_COMM_WORLD_SIZE", "2"},
               {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
               {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"},
               {"OMPI_MCA_ess_base_jobid", "4242"},
               {"SMD_MASTER_PORT", std::to_string(port)},
               {"SMD_RENDEZVOUS_DIR", notes_}};
  });
  EXPECT_TRUE(job.finish()) << job.output();
}

}  // namespace
