#include "core/observe/fatal_signal_dump.h"

#include <signal.h>

#include <atomic>
#include <mutex>

#include "core/observe/flight_recorder.h"

namespace smd {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM};
constexpr int kNumSignals = sizeof(kSignals) / sizeof(kSignals[0]);
constexpr int kSlots = 256;

std::atomic<const FlightRecorder *> g_recorders[kSlots];
struct sigaction g_previous[kNumSignals];
std::atomic<bool> g_dumping{false};

// "signal 11" without snprintf (not async-signal-safe).
void signal_reason(int sig, char (&buf)[16]) {
  const char prefix[] = "signal ";
  int n = 0;
  for (const char *p = prefix; *p; ++p) buf[n++] = *p;
  if (sig >= 10) buf[n++] = static_cast<char>('0' + sig / 10 % 10);
  buf[n++] = static_cast<char>('0' + sig % 10);
  buf[n] = 0;
}

void on_fatal_signal(int sig, siginfo_t *info, void *uctx) {
  // A second fatal signal while dumping (a torn entry that faults) goes
  // straight to the previous handler.
  if (!g_dumping.exchange(true)) {
    char reason[16];
    signal_reason(sig, reason);
    for (auto &slot : g_recorders)
      if (const FlightRecorder *r = slot.load(std::memory_order_acquire)) r->dump(reason);
  }
  int i = 0;
  while (i < kNumSignals && kSignals[i] != sig) ++i;
  if (i == kNumSignals) return;
  const struct sigaction &prev = g_previous[i];
  if (prev.sa_flags & SA_SIGINFO) {
    if (prev.sa_sigaction) {
      g_dumping.store(false);
      prev.sa_sigaction(sig, info, uctx);
      return;
    }
  } else if (prev.sa_handler == SIG_IGN) {
    g_dumping.store(false);
    return;
  } else if (prev.sa_handler != SIG_DFL) {
    g_dumping.store(false);
    prev.sa_handler(sig);
    return;
  }
  // The default action: put it back and deliver the signal again; it is
  // blocked while this handler runs, so it ends the process on return (a
  // fault re-executes the faulting instruction and arrives again anyway).
  sigaction(sig, &prev, nullptr);
  raise(sig);
}

void install_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int i = 0; i < kNumSignals; ++i) {
      struct sigaction sa = {};
      sa.sa_sigaction = on_fatal_signal;
      sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
      sigemptyset(&sa.sa_mask);
      sigaction(kSignals[i], &sa, &g_previous[i]);
    }
  });
}

}  // namespace

int dump_on_fatal_signal(const FlightRecorder *recorder) {
  install_once();
  for (int i = 0; i < kSlots; ++i) {
    const FlightRecorder *expected = nullptr;
    if (g_recorders[i].compare_exchange_strong(expected, recorder)) return i;
  }
  return -1;
}

void forget_on_fatal_signal(int slot) {
  if (slot >= 0 && slot < kSlots) g_recorders[slot].store(nullptr, std::memory_order_release);
}

}  // namespace smd
