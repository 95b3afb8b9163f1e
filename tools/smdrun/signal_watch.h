// The signals smdrun reacts to, delivered as readable events on one fd so
// the supervision loop handles them between reads (no async handlers).
#pragma once

#include <csignal>
#include <vector>

#include "fd_io.h"

namespace smdrun {

class SignalWatch {
 public:
  // Blocks SIGCHLD, SIGINT, SIGTERM and SIGHUP and opens a signalfd for
  // them; ignores SIGPIPE so a vanished reader of smdrun's output is an
  // EPIPE, not a silent death. Throws std::runtime_error on failure.
  SignalWatch();
  ~SignalWatch();
  SignalWatch(const SignalWatch &) = delete;
  SignalWatch &operator=(const SignalWatch &) = delete;

  int fd() const { return fd_.get(); }

  // The signals that arrived since the last call, oldest first.
  std::vector<int> take();

  // Puts back the mask and SIGPIPE disposition smdrun started with: in a
  // freshly forked rank before exec, and when the watch ends.
  // Async-signal-safe.
  void restore() const;

 private:
  sigset_t old_mask_;
  struct sigaction old_sigpipe_;
  UniqueFd fd_;
};

}  // namespace smdrun
