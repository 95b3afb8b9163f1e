#include "signal_watch.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <sys/signalfd.h>
#include <unistd.h>

namespace smdrun {

SignalWatch::SignalWatch() {
  sigset_t watched;
  sigemptyset(&watched);
  for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&watched, sig);
  sigprocmask(SIG_BLOCK, &watched, &old_mask_);

  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old_sigpipe_);

  fd_.reset(::signalfd(-1, &watched, SFD_NONBLOCK | SFD_CLOEXEC));
  if (!fd_.valid()) {
    int err = errno;
    restore();
    throw std::runtime_error(std::string("signalfd: ") + std::strerror(err));
  }
}

SignalWatch::~SignalWatch() { restore(); }

std::vector<int> SignalWatch::take() {
  std::vector<int> signals;
  signalfd_siginfo info;
  while (::read(fd_.get(), &info, sizeof info) == sizeof info)
    signals.push_back(static_cast<int>(info.ssi_signo));
  return signals;
}

void SignalWatch::restore() const {
  sigaction(SIGPIPE, &old_sigpipe_, nullptr);
  sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
}

}  // namespace smdrun
