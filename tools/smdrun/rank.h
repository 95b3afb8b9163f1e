// One launched rank as the supervisor tracks it.
#pragma once

#include <sys/types.h>

#include "rank_stream.h"

namespace smdrun {

struct Rank {
  int index = 0;
  pid_t pid = -1;
  RankStream out;
  RankStream err;
  bool running = true;
  // The signals smdrun sent it (bit sig), forwarded or its own.
  unsigned long long sent = 0;

  // Sends `sig` to the rank's process group (the rank and what it
  // started), or to the rank alone if it left that group. Only for a rank
  // not yet reaped, whose pid cannot have been reused.
  void signal(int sig);

  // Whether wait status `status` is the death smdrun asked for: killed by
  // a signal smdrun sent, or exited with 128 + that signal as shells and
  // Python do. Any other failure is the rank's own, signal or not: a
  // rank that ignores a forwarded signal can still fail later.
  bool ended_by_smdrun(int status) const;
};

}  // namespace smdrun
