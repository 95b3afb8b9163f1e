// Transport libraries may take over the process's signals: libfabric's
// psm provider loads libinfinipath, whose SIGINT handler calls exit(1)
// (Ctrl-C in a Python program then ends it with no KeyboardInterrupt and
// no message), and UCX installs handlers for SIGSEGV and others. Signals
// belong to the application: a SignalGuard around a plugin's loading and
// the calls that may initialise its libraries puts back every disposition
// that changed during its life, and says which plugin changed it.
#pragma once

#include <signal.h>

#include <string>

namespace smd {

class SignalGuard {
 public:
  // `who` names the plugin in the message when a handler is put back.
  explicit SignalGuard(std::string who);
  ~SignalGuard();
  SignalGuard(const SignalGuard &) = delete;
  SignalGuard &operator=(const SignalGuard &) = delete;

  // The signals guarded: those programs handle, and the faults.
  static constexpr int kSignals[] = {SIGINT,  SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,
                                     SIGPIPE, SIGSEGV, SIGBUS, SIGFPE,  SIGILL,  SIGABRT};

 private:
  std::string who_;
  struct sigaction saved_[sizeof kSignals / sizeof kSignals[0]];
};

}  // namespace smd
