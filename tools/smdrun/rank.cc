#include "rank.h"

#include <csignal>
#include <sys/wait.h>

namespace smdrun {
namespace {

bool in(unsigned long long set, int sig) { return sig > 0 && sig < 64 && (set >> sig) & 1; }

}  // namespace

void Rank::signal(int sig) {
  if (::kill(-pid, sig) != 0) ::kill(pid, sig);
  if (sig > 0 && sig < 64) sent |= 1ULL << sig;
}

bool Rank::ended_by_smdrun(int status) const {
  if (WIFSIGNALED(status)) return in(sent, WTERMSIG(status));
  return WIFEXITED(status) && in(sent, WEXITSTATUS(status) - 128);
}

}  // namespace smdrun
