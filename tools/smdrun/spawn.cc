#include "spawn.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace smdrun {
namespace {

struct Pipe {
  UniqueFd read, write;
};

Pipe make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw SpawnError(std::string("pipe: ") + std::strerror(errno), errno, false);
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

std::vector<char *> c_strings(const std::vector<std::string> &strings) {
  std::vector<char *> out;
  for (const std::string &s : strings) out.push_back(const_cast<char *>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// In the child: tells the parent why it never reached the program.
[[noreturn]] void fail_start(int report_fd) {
  int err = errno;
  (void)!::write(report_fd, &err, sizeof err);
  ::_exit(127);
}

// Runs in the forked child: only async-signal-safe calls from here on.
[[noreturn]] void become_rank(char *const *argv, char *const *envp, int stdin_fd, int out_fd,
                              int err_fd, int report_fd, pid_t parent, const SignalWatch &signals,
                              int cpu) {
  ::setpgid(0, 0);
  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (::sched_setaffinity(0, sizeof set, &set) != 0) fail_start(report_fd);
  }
  // The death signal is armed only from now on: if smdrun already died,
  // we were reparented and must not run unsupervised.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(127);
  signals.restore();
  if (::dup2(stdin_fd, 0) < 0 || ::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0)
    fail_start(report_fd);
  ::execvpe(argv[0], argv, envp);
  fail_start(report_fd);
}

}  // namespace

SpawnedRank spawn_rank(const std::vector<std::string> &argv, const std::vector<std::string> &env,
                       int stdin_fd, const SignalWatch &signals, int cpu) {
  Pipe out = make_pipe(), err = make_pipe();
  // Closes on a successful exec; carries errno back when exec fails.
  Pipe report = make_pipe();
  std::vector<char *> c_argv = c_strings(argv), c_env = c_strings(env);

  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) throw SpawnError(std::string("fork: ") + std::strerror(errno), errno, false);
  if (pid == 0)
    become_rank(c_argv.data(), c_env.data(), stdin_fd, out.write.get(), err.write.get(),
                report.write.get(), parent, signals, cpu);

  report.write.reset();
  int exec_errno = 0;
  ssize_t n;
  do {
    n = ::read(report.read.get(), &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  if (n != 0) {
    ::waitpid(pid, nullptr, 0);
    if (n != sizeof exec_errno) exec_errno = EIO;
    throw SpawnError((cpu >= 0 ? "cannot run '" + argv[0] + "' on CPU " + std::to_string(cpu)
                               : "cannot run '" + argv[0] + "'") +
                         ": " + std::strerror(exec_errno),
                     exec_errno, true);
  }
  ::fcntl(out.read.get(), F_SETFL, O_NONBLOCK);
  ::fcntl(err.read.get(), F_SETFL, O_NONBLOCK);
  return {pid, std::move(out.read), std::move(err.read)};
}

std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

}  // namespace smdrun
