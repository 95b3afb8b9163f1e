#include "smdrun_process.h"

#include <cerrno>
#include <cstdio>
#include <gtest/gtest.h>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <stdexcept>
#include <sys/mman.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

namespace smdrun_test {
namespace {

using Clock = std::chrono::steady_clock;

std::string smdrun_path() {
  const char *path = std::getenv("SMDRUN");
  if (!path || !*path)
    throw std::runtime_error("SMDRUN is not set (run the tests with meson test)");
  return path;
}

std::string read_all(int fd) {
  std::string text;
  char buf[1 << 16];
  off_t offset = 0;
  ssize_t n;
  while ((n = ::pread(fd, buf, sizeof buf, offset)) > 0) {
    text.append(buf, static_cast<size_t>(n));
    offset += n;
  }
  return text;
}

int count_of(const std::string &text, const std::string &needle) {
  int count = 0;
  for (size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size()))
    ++count;
  return count;
}

std::vector<std::string> merged_env(const std::vector<std::string> &changes) {
  std::vector<std::string> env;
  auto name_of = [](const std::string &e) { return e.substr(0, e.find('=')); };
  for (char **e = environ; *e; ++e) {
    bool replaced = false;
    for (const std::string &c : changes) replaced |= name_of(c) == name_of(*e);
    if (!replaced) env.emplace_back(*e);
  }
  for (const std::string &c : changes)
    if (c.find('=') != std::string::npos) env.push_back(c);
  return env;
}

std::vector<char *> c_strings(std::vector<std::string> &strings) {
  std::vector<char *> out;
  for (std::string &s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::string helper_path() { return SMDRUN_HELPER; }

int RunResult::exit_code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }

std::vector<std::string> rank_lines(const std::string &text, int rank) {
  std::string prefix = std::string("[").append(std::to_string(rank)).append("] ");
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(start, nl - start);
    if (line.compare(0, prefix.size(), prefix) == 0) lines.push_back(line.substr(prefix.size()));
    start = nl + 1;
  }
  return lines;
}

std::vector<pid_t> RunResult::pids() const {
  std::vector<pid_t> pids;
  for (size_t at = out.find("pid="); at != std::string::npos; at = out.find("pid=", at + 4))
    pids.push_back(static_cast<pid_t>(std::atol(out.c_str() + at + 4)));
  return pids;
}

SmdrunProcess::SmdrunProcess(const std::vector<std::string> &args,
                             const std::vector<std::string> &env, const std::vector<int> &ignored) {
  out_fd_ = ::memfd_create("smdrun-out", MFD_CLOEXEC);
  err_fd_ = ::memfd_create("smdrun-err", MFD_CLOEXEC);
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (out_fd_ < 0 || err_fd_ < 0 || null_fd < 0)
    throw std::runtime_error("cannot create capture files");

  std::vector<std::string> argv = {smdrun_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> envp = merged_env(env);
  std::vector<char *> c_argv = c_strings(argv), c_envp = c_strings(envp);

  start_ = Clock::now();
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(null_fd, 0);
    ::dup2(out_fd_, 1);
    ::dup2(err_fd_, 2);
    for (int sig : ignored) std::signal(sig, SIG_IGN);
    ::execve(c_argv[0], c_argv.data(), c_envp.data());
    ::_exit(120);
  }
  ::close(null_fd);
  if (pid_ < 0) throw std::runtime_error("fork failed");
}

SmdrunProcess::~SmdrunProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  ::close(out_fd_);
  ::close(err_fd_);
}

bool SmdrunProcess::wait_for(int fd, const std::string &needle, int count, double timeout_s) {
  auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (Clock::now() < deadline) {
    if (count_of(read_all(fd), needle) >= count) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

bool SmdrunProcess::wait_for_out(const std::string &needle, int count, double timeout_s) {
  return wait_for(out_fd_, needle, count, timeout_s);
}

bool SmdrunProcess::wait_for_err(const std::string &needle, int count, double timeout_s) {
  return wait_for(err_fd_, needle, count, timeout_s);
}

void SmdrunProcess::signal(int sig) { ::kill(pid_, sig); }

RunResult SmdrunProcess::wait(double timeout_s) {
  RunResult result;
  auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  pid_t done;
  while ((done = ::waitpid(pid_, &result.status, WNOHANG)) == 0) {
    if (Clock::now() >= deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &result.status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  pid_ = -1;
  result.out = read_all(out_fd_);
  result.err = read_all(err_fd_);
  return result;
}

RunResult run_smdrun(const std::vector<std::string> &args, const std::vector<std::string> &env) {
  return SmdrunProcess(args, env).wait();
}

std::string unused_temp_path(const std::string &name) {
  std::string path = testing::TempDir() + "smdrun-" + name + "-" + std::to_string(::getpid());
  std::remove(path.c_str());
  return path;
}

bool process_gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

}  // namespace smdrun_test
