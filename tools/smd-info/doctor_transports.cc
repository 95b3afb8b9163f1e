// Two ranks forked from smd-info form a world over one transport through
// libsmd's own rendezvous (rank 0 serves the store on a free loopback
// port) and allreduce a small and a large vector: the eager and the large
// message paths of the plugin.
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <smd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "doctor.h"

namespace smdinfo {
namespace {

constexpr int kDeadlineMs = 30000;

int free_loopback_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

// What one rank does; returns "" or what went wrong.
std::string run_rank(int rank, int port, const std::string &transport) {
  smd_init_options_t o = SMD_INIT_OPTIONS_INIT;
  o.rank = rank;
  o.world_size = 2;
  o.store_addr = "127.0.0.1";
  o.store_port = port;
  o.transport = transport.c_str();
  o.timeout_ms = kDeadlineMs;
  std::string token = "smd-info-doctor-" + std::to_string(getppid());
  o.job_token = token.c_str();
  smd_comm_t *world = nullptr;
  auto failed = [](const char *call, smd_result_t r) {
    return std::string(call) + ": " + smd_result_string(r) + ": " + smd_last_error();
  };
  if (smd_result_t r = smd_comm_init(&o, &world)) return failed("smd_comm_init", r);
  std::string problem;
  for (size_t count : {size_t{4}, size_t{1} << 20}) {
    std::vector<int32_t> v(count, rank + 1);
    if (smd_result_t r =
            smd_allreduce(v.data(), v.data(), count, SMD_INT32, SMD_SUM, world, nullptr)) {
      problem = failed("smd_allreduce", r);
      break;
    }
    if (v.front() != 3 || v.back() != 3) {
      problem = "allreduce of " + std::to_string(count) + " int32 gave wrong sums";
      break;
    }
  }
  smd_comm_destroy(world);
  return problem;
}

}  // namespace

CheckResult check_transport(const std::string &transport) {
  CheckResult r{"transport " + transport, Verdict::kOk, "", ""};
  int port = free_loopback_port();
  if (port < 0) return {r.item, Verdict::kFail, "no free TCP port on 127.0.0.1 for the store", ""};
  std::vector<pid_t> pids;
  std::vector<int> outs;
  for (int rank = 0; rank < 2; ++rank) {
    int p[2];
    if (pipe(p) != 0) return {r.item, Verdict::kFail, "pipe failed", ""};
    pid_t pid = fork();
    if (pid == 0) {
      close(p[0]);
      std::string why = run_rank(rank, port, transport);
      (void)!write(p[1], why.data(), why.size());
      _exit(why.empty() ? 0 : 1);
    }
    close(p[1]);
    pids.push_back(pid);
    outs.push_back(p[0]);
  }
  // Read both ranks' reports, killing them at the deadline.
  std::string why[2];
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kDeadlineMs + 5000);
  int open_pipes = 2;
  bool timed_out = false;
  while (open_pipes > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[2] = {{outs[0], POLLIN, 0}, {outs[1], POLLIN, 0}};
    if (poll(fds, 2, static_cast<int>(left)) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (outs[i] < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[512];
      ssize_t n = read(outs[i], buf, sizeof buf);
      if (n > 0) {
        why[i].append(buf, static_cast<size_t>(n));
      } else {
        close(outs[i]);
        outs[i] = -1;
        --open_pipes;
      }
    }
  }
  for (int i = 0; i < 2; ++i) {
    if (timed_out) kill(pids[i], SIGKILL);
    int status = 0;
    waitpid(pids[i], &status, 0);
    if (outs[i] >= 0) close(outs[i]);
    if (why[i].empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
      why[i] = WIFSIGNALED(status) ? "died of signal " + std::to_string(WTERMSIG(status))
                                   : "exited " + std::to_string(WEXITSTATUS(status));
  }
  if (timed_out) {
    r.verdict = Verdict::kFail;
    r.detail =
        "two local ranks did not finish within " + std::to_string(kDeadlineMs / 1000 + 5) + " s";
  } else if (!why[0].empty() || !why[1].empty()) {
    r.verdict = Verdict::kFail;
    r.detail = why[0].empty() ? "rank 1: " + why[1] : "rank 0: " + why[0];
  } else {
    r.detail = "two local ranks formed a world and allreduced 16 B and 4 MiB";
    return r;
  }
  r.fix = "rerun with SMD_DEBUG=info SMD_TRANSPORT=" + transport +
          " for the plugin's own account; SMD_TRANSPORT=auto avoids it only if another network "
          "plugin works";
  return r;
}

}  // namespace smdinfo
