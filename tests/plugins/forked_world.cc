#include "forked_world.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "free_port.h"

namespace smd::test {
namespace {

// Rank side: set the environment, form the world, write "<result>\n<error>"
// to fd and leave without running anything of the parent's (no atexit).
[[noreturn]] void run_rank(int rank, int nranks, int port, const std::string &token,
                           const std::vector<std::pair<std::string, std::string>> &env, int fd) {
  for (const char *foreign :
       {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"})
    unsetenv(foreign);
  setenv("SMD_RANK", std::to_string(rank).c_str(), 1);
  setenv("SMD_WORLD_SIZE", std::to_string(nranks).c_str(), 1);
  setenv("SMD_MASTER_ADDR", "127.0.0.1", 1);
  setenv("SMD_MASTER_PORT", std::to_string(port).c_str(), 1);
  setenv("SMD_JOB_TOKEN", token.c_str(), 1);
  setenv("SMD_TIMEOUT", "5", 1);
  for (const auto &[name, value] : env) {
    std::string v = value;
    for (size_t at; (at = v.find("%r")) != std::string::npos;)
      v.replace(at, 2, std::to_string(rank));
    setenv(name.c_str(), v.c_str(), 1);
  }

  smd_comm_t *world = nullptr;
  smd_result_t r = smd_comm_init(nullptr, &world);
  std::string report = std::to_string(static_cast<int>(r)) + "\n" + smd_last_error();
  if (world) smd_comm_destroy(world);
  const char *p = report.data();
  size_t left = report.size();
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n <= 0) break;
    p += n;
    left -= static_cast<size_t>(n);
  }
  _exit(0);
}

std::string read_all(int fd) {
  std::string s;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) s.append(buf, static_cast<size_t>(n));
  return s;
}

}  // namespace

std::vector<RankOutcome> init_forked_world(
    int nranks, const std::vector<std::pair<std::string, std::string>> &env) {
  static int worlds = 0;
  int port = smdrun::pick_free_port("127.0.0.1");
  std::string token = "plugin-test-" + std::to_string(getpid()) + "-" + std::to_string(++worlds);
  std::vector<pid_t> pids;
  std::vector<int> fds;
  for (int r = 0; r < nranks; ++r) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) break;
    fflush(nullptr);  // nothing buffered gets written twice
    pid_t pid = fork();
    if (pid == 0) {
      close(p[0]);
      run_rank(r, nranks, port, token, env, p[1]);
    }
    close(p[1]);
    if (pid < 0) {
      close(p[0]);
      break;
    }
    pids.push_back(pid);
    fds.push_back(p[0]);
  }
  std::vector<RankOutcome> out(static_cast<size_t>(nranks));
  for (size_t r = 0; r < pids.size(); ++r) {
    std::string report = read_all(fds[r]);
    close(fds[r]);
    int status = 0;
    waitpid(pids[r], &status, 0);
    size_t nl = report.find('\n');
    if (nl != std::string::npos) {
      out[r].result = atoi(report.substr(0, nl).c_str());
      out[r].error = report.substr(nl + 1);
    } else {
      out[r].error = "rank " + std::to_string(r) + " reported nothing (wait status " +
                     std::to_string(status) + ")";
    }
  }
  return out;
}

}  // namespace smd::test
