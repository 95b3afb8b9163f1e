// Ctrl-C for calls that block on the calling thread (smd_set_interrupt_fd):
// a signal handler writes the signal number to a pipe (Python's
// signal.set_wakeup_fd does), and the waits of this thread read it now and
// then, so a SIGINT ends the wait instead of going unnoticed until the call
// returns. Per thread: worker threads never read the caller's pipe.
#pragma once

#include <cstdint>

namespace smd {

// This thread's interrupt fd (-1: none); returns the previous one.
int set_interrupt_fd(int fd);

// Set by every entry point (guarded()): what is on the fd at the call's
// first look came before the call (a Ctrl-C Python already handled), and is
// discarded.
extern thread_local bool tls_interrupt_call_started;
inline void interrupt_call_started() { tls_interrupt_call_started = true; }

// Whether a SIGINT arrived on this thread's interrupt fd during the current
// call. Reads the fd at most once per millisecond of `now_ns` (other bytes,
// other signals, are consumed and ignored); free when no fd is set.
bool interrupt_requested(int64_t now_ns);

}  // namespace smd
