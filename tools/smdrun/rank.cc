#include "rank.h"

#include <csignal>

namespace smdrun {

void Rank::signal(int sig) {
  if (::kill(-pid, sig) != 0) ::kill(pid, sig);
  signalled = true;
}

}  // namespace smdrun
