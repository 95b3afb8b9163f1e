// Runs the smdrun under test ($SMDRUN) as a child of the test, with its
// stdout and stderr captured in memory files (they never fill, so the test
// cannot deadlock smdrun), and lets the test signal it mid-run.
#pragma once

#include <chrono>
#include <string>
#include <sys/types.h>
#include <vector>

namespace smdrun_test {

// Path of the rank helper program (smdrun_helper.cc).
std::string helper_path();

struct RunResult {
  int status = 0;      // waitpid() status of smdrun
  std::string out;     // smdrun's stdout
  std::string err;     // smdrun's stderr
  double seconds = 0;  // wall time from start to exit

  // smdrun's exit code; -1 if it did not exit normally.
  int exit_code() const;
  // Every integer that follows "pid=" in out.
  std::vector<pid_t> pids() const;
};

class SmdrunProcess {
 public:
  // Starts `$SMDRUN args...`; `env` entries (NAME=value) are added to, or
  // replace entries of, the test's environment; NAME alone removes one.
  // `ignored` signals start out ignored in smdrun (and so in its ranks),
  // as a shell does for a job started with '&' from a script (SIGINT).
  explicit SmdrunProcess(const std::vector<std::string> &args,
                         const std::vector<std::string> &env = {},
                         const std::vector<int> &ignored = {});
  ~SmdrunProcess();  // kills smdrun if the test did not wait for it
  SmdrunProcess(const SmdrunProcess &) = delete;
  SmdrunProcess &operator=(const SmdrunProcess &) = delete;

  pid_t pid() const { return pid_; }
  // Waits until stdout (or stderr) holds `needle` at least `count` times.
  bool wait_for_out(const std::string &needle, int count, double timeout_s = 60);
  bool wait_for_err(const std::string &needle, int count, double timeout_s = 60);
  void signal(int sig);
  // Waits for smdrun to exit (killing it after `timeout_s`) and collects it.
  RunResult wait(double timeout_s = 60);

 private:
  bool wait_for(int fd, const std::string &needle, int count, double timeout_s);

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  std::chrono::steady_clock::time_point start_;
};

// The lines of `text` that start with "[rank] ", without that prefix.
std::vector<std::string> rank_lines(const std::string &text, int rank);

// Starts smdrun with `args` and waits for it.
RunResult run_smdrun(const std::vector<std::string> &args,
                     const std::vector<std::string> &env = {});

// A path in the test's temporary folder, named after `name` and this
// process, with nothing there yet.
std::string unused_temp_path(const std::string &name);

// Whether process `pid` no longer exists (not even as a zombie).
bool process_gone(pid_t pid);

}  // namespace smdrun_test
