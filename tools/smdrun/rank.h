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
  // smdrun sent it a terminating signal, so its death is expected and is
  // not reported as a failure of its own.
  bool signalled = false;

  // Sends `sig` to the rank's process group (the rank and what it
  // started), or to the rank alone if it left that group. Only for a rank
  // not yet reaped, whose pid cannot have been reused.
  void signal(int sig);
};

}  // namespace smdrun
