// Dumps every live flight recorder when the process dies of a fatal
// signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) or is told to stop
// (SIGTERM: what smdrun and most launchers send the ranks still running
// after one failed, so the rank that fell behind leaves its record too).
// The handler only opens, writes and closes files whose names were
// formatted beforehand, then hands the signal to the handler that was
// installed before (or to the default action, which ends the process).
#pragma once

namespace smd {

class FlightRecorder;

// Installs the handlers on first use. Returns a slot for
// forget_on_fatal_signal, or -1 when the table of recorders is full
// (such a recorder still dumps on failures, only not on signals).
int dump_on_fatal_signal(const FlightRecorder *recorder);
void forget_on_fatal_signal(int slot);

}  // namespace smd
