#include "core/plugin/signal_guard.h"

#include <cstring>

#include "core/util/log.h"

namespace smd {

SignalGuard::SignalGuard(std::string who) : who_(std::move(who)) {
  for (size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i)
    sigaction(kSignals[i], nullptr, &saved_[i]);
}

SignalGuard::~SignalGuard() {
  for (size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i) {
    struct sigaction now;
    if (sigaction(kSignals[i], nullptr, &now) != 0) continue;
    bool same = (now.sa_flags & SA_SIGINFO) == (saved_[i].sa_flags & SA_SIGINFO) &&
                ((now.sa_flags & SA_SIGINFO) ? now.sa_sigaction == saved_[i].sa_sigaction
                                             : now.sa_handler == saved_[i].sa_handler);
    if (same) continue;
    sigaction(kSignals[i], &saved_[i], nullptr);
    SMD_INFO("transport", "%s installed a handler for %s; the application's was put back",
             who_.c_str(), strsignal(kSignals[i]));
  }
}

}  // namespace smd
