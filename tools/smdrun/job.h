// A launch of N ranks, from start to the exit code: forwards their output,
// reaps them, and applies the failure, timeout and signal policies.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "fd_io.h"
#include "options.h"
#include "rank.h"
#include "rank_env.h"
#include "signal_watch.h"

namespace smdrun {

class Job {
 public:
  using Clock = std::chrono::steady_clock;

  Job(const Options &options, JobSpec spec, SignalWatch &signals);

  // Starts every rank. If one cannot start, kills and reaps those already
  // running and rethrows the SpawnError.
  void launch();

  // Runs until every rank has been reaped and its output forwarded;
  // returns smdrun's exit code.
  int supervise();

 private:
  void reap();
  void on_exit(Rank &rank, int status);
  void on_signal(int sig);
  void on_deadlines(Clock::time_point now);
  void signal_running(int sig);
  std::optional<Clock::time_point> next_deadline() const;
  std::string running_list() const;
  bool any_running() const;
  void settle_exit_code(int code);
  void say(const std::string &line);

  Options options_;
  JobSpec spec_;
  SignalWatch &signals_;
  OutputSink stdout_{1};
  OutputSink stderr_{2};
  std::vector<Rank> ranks_;

  // The first reason the job stopped decides the exit code.
  std::optional<int> exit_code_;
  int first_stop_signal_ = 0;  // the first SIGINT/SIGTERM/SIGHUP received
  // The ranks still running are being stopped (grace period, timeout or a
  // second stop signal): a later rank's end does not start another grace.
  bool stopping_ = false;
  bool loader_hint_given_ = false;
  std::optional<Clock::time_point> timeout_at_;   // --timeout
  std::optional<Clock::time_point> term_at_;      // end of the grace period
  std::optional<Clock::time_point> kill_at_;      // SIGTERM ignored too long
  std::optional<Clock::time_point> drain_until_;  // all reaped, pipes open
};

}  // namespace smdrun
