// A rank program for smdrun's tests. Runs its arguments as steps in order;
// a step "R@step" runs only on rank R (from SMD_RANK). Steps:
//   env             print the launcher variables as NAME=value, one per line
//   pid             print "pid=<pid>"
//   cpus            print "cpus=<the CPUs it may run on, ascending, comma-separated>"
//   out=T / err=T   print line T to stdout / stderr
//   outpart=T       print T to stdout without a newline (errpart=T: stderr)
//   spam=B          print about B bytes of numbered lines to each of stdout
//                   and stderr, alternating, to fill pipes
//   sleep=S         sleep S seconds (fractions allowed)
//   exit=C          exit with status C
//   kill=K          send itself signal K
//   catch=K         on signal K print "caught signal K" and exit 0
//   ignore=K        ignore signal K
//   pidfile=F       write this process's pid to file F
//   file=F          wait until file F exists; exit 97 if that takes over
//                   a minute
//   reaped=F        wait until file F names a pid that is gone (exited and
//                   reaped by smdrun); exit 97 if that takes over a minute
// Output goes straight to the fds (no stdio buffering) so each step's
// bytes are in the pipe before the next step runs.
#include <fcntl.h>
#include <sched.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <unistd.h>

namespace {

void put(int fd, const std::string &text) {
  const char *p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n <= 0) std::_Exit(99);
    p += n;
    left -= static_cast<size_t>(n);
  }
}

// Async-signal-safe: formats the number by hand.
void on_caught(int sig) {
  char line[32] = "caught signal ";
  size_t len = std::strlen(line);
  if (sig >= 10) line[len++] = static_cast<char>('0' + sig / 10);
  line[len++] = static_cast<char>('0' + sig % 10);
  line[len++] = '\n';
  (void)!::write(1, line, len);
  ::_exit(0);
}

void print_env() {
  static const char *const kNames[] = {
      "SMD_RANK",        "SMD_WORLD_SIZE",   "SMD_LOCAL_RANK", "SMD_LOCAL_SIZE", "SMD_MASTER_ADDR",
      "SMD_MASTER_PORT", "SMD_JOB_TOKEN",    "SMD_NODE_ID",    "RANK",           "WORLD_SIZE",
      "LOCAL_RANK",      "LOCAL_WORLD_SIZE", "MASTER_ADDR",    "MASTER_PORT"};
  std::string text;
  for (const char *name : kNames)
    if (const char *value = std::getenv(name)) text += std::string(name) + "=" + value + "\n";
  put(1, text);
}

void spam(long bytes, int rank) {
  const std::string pad(80, 'x');
  long written = 0;
  for (long seq = 0; written < bytes; ++seq) {
    std::string line = std::to_string(rank) + " " + std::to_string(seq) + " " + pad + "\n";
    put(seq % 2 ? 2 : 1, line);
    if (seq % 2) written += static_cast<long>(line.size());
  }
}

// Written under another name and renamed, so a reader never sees half.
void write_pid_file(const std::string &path) {
  std::string part = path + ".part";
  int fd = ::open(part.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) std::_Exit(96);
  put(fd, std::to_string(::getpid()));
  ::close(fd);
  if (::rename(part.c_str(), path.c_str()) != 0) std::_Exit(96);
}

// A pid is gone once kill(pid, 0) fails with ESRCH: an exited process
// that smdrun has not yet waited for (a zombie) still answers.
void wait_until_reaped(const std::string &path) {
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < limit) {
    std::ifstream in(path);
    pid_t pid = 0;
    if (in >> pid && pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH) return;
    ::usleep(10000);
  }
  put(2, "smdrun_helper: the process named in " + path + " is still there after 60 s\n");
  std::_Exit(97);
}

void wait_for_file(const std::string &path) {
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < limit) {
    if (::access(path.c_str(), F_OK) == 0) return;
    ::usleep(10000);
  }
  put(2, "smdrun_helper: " + path + " still missing after 60 s\n");
  std::_Exit(97);
}

void run_step(const std::string &name, const std::string &arg, int rank) {
  if (name == "env") {
    print_env();
  } else if (name == "pid") {
    put(1, "pid=" + std::to_string(::getpid()) + "\n");
  } else if (name == "cpus") {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::string list;
    if (::sched_getaffinity(0, sizeof set, &set) == 0)
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) {
          if (!list.empty()) list += ',';
          list += std::to_string(c);
        }
    put(1, "cpus=" + list + "\n");
  } else if (name == "out" || name == "err") {
    put(name == "out" ? 1 : 2, arg + "\n");
  } else if (name == "outpart" || name == "errpart") {
    put(name == "outpart" ? 1 : 2, arg);
  } else if (name == "spam") {
    spam(std::atol(arg.c_str()), rank);
  } else if (name == "sleep") {
    double s = std::atof(arg.c_str());
    timespec ts{static_cast<time_t>(s), static_cast<long>((s - static_cast<time_t>(s)) * 1e9)};
    while (::nanosleep(&ts, &ts) != 0) {
    }
  } else if (name == "exit") {
    std::exit(std::atoi(arg.c_str()));
  } else if (name == "kill") {
    ::kill(::getpid(), std::atoi(arg.c_str()));
  } else if (name == "catch") {
    std::signal(std::atoi(arg.c_str()), on_caught);
  } else if (name == "ignore") {
    std::signal(std::atoi(arg.c_str()), SIG_IGN);
  } else if (name == "pidfile") {
    write_pid_file(arg);
  } else if (name == "file") {
    wait_for_file(arg);
  } else if (name == "reaped") {
    wait_until_reaped(arg);
  } else {
    put(2, "smdrun_helper: unknown step '" + name + "'\n");
    std::exit(98);
  }
}

}  // namespace

int main(int argc, char **argv) {
  const char *rank_text = std::getenv("SMD_RANK");
  int rank = rank_text ? std::atoi(rank_text) : 0;
  for (int i = 1; i < argc; ++i) {
    std::string step = argv[i];
    size_t at = step.find('@');
    if (at != std::string::npos) {
      if (std::atoi(step.substr(0, at).c_str()) != rank) continue;
      step.erase(0, at + 1);
    }
    size_t eq = step.find('=');
    std::string name = step.substr(0, eq);
    std::string arg = eq == std::string::npos ? "" : step.substr(eq + 1);
    run_step(name, arg, rank);
  }
  return 0;
}
