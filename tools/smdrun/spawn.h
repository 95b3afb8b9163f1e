// Starting one rank: fork, wire its output to pipes, exec the program.
#pragma once

#include <stdexcept>
#include <string>
#include <sys/types.h>
#include <vector>

#include "fd_io.h"
#include "signal_watch.h"

namespace smdrun {

struct SpawnedRank {
  pid_t pid = -1;
  UniqueFd out;  // read ends of the rank's stdout and stderr, non-blocking
  UniqueFd err;
};

// Why a rank could not start. exec_failed: the program itself could not be
// run (errno from execvpe); otherwise smdrun could not make the process.
struct SpawnError : std::runtime_error {
  SpawnError(const std::string &what, int err, bool exec_failed)
      : std::runtime_error(what), err(err), exec_failed(exec_failed) {}
  int err;
  bool exec_failed;
};

// Forks and execs `argv` (searched on PATH) with environment `env` and
// stdin from `stdin_fd`. The rank leads its own process group, so a signal
// to the group reaches anything it starts, and the terminal's Ctrl-C
// reaches only smdrun; it gets SIGKILL if smdrun dies. Returns once the
// exec has succeeded; throws SpawnError otherwise (nothing is left running).
// cpu >= 0: the rank may run on that CPU only (set before the exec).
SpawnedRank spawn_rank(const std::vector<std::string> &argv, const std::vector<std::string> &env,
                       int stdin_fd, const SignalWatch &signals, int cpu = -1);

// The CPUs smdrun may run on (its affinity mask), ascending.
std::vector<int> allowed_cpus();

}  // namespace smdrun
