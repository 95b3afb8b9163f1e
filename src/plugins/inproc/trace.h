// A record of every message, for smd-sim's schedule replay (docs/SCALE.md,
// Simulator): once an init found SMD_INPROC_TRACE naming a file, each
// send and each receive's completion, as its rank saw them, is appended
// there when the rank's context finalizes. Off (one branch per send and
// per finished receive) otherwise.
//
// A line: "<ns> <rank> S <id> <dst> <bytes>" for a send, "<ns> <rank> R
// <id>" for a receive of message <id> that the rank's test saw finish.
// <ns> is std::chrono::steady_clock in nanoseconds; <id> counts messages
// from 1 in this process. A rank's lines in time order are its program
// order: a send depends on the receives its rank saw before it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace smd_inproc {

// Turns tracing on into `path` (the first init that names one decides;
// nullptr or "" leaves it as it is).
void trace_to(const char *path);
// Whether tracing is on.
bool tracing();
// A fresh message id (tracing only).
uint64_t trace_send(int32_t rank, int32_t dst, size_t bytes);
void trace_receive(int32_t rank, uint64_t id);
// Appends what was recorded to the file (a context finalizes); false
// when the file could not be written (*path: its name).
bool trace_flush(std::string *path);

}  // namespace smd_inproc
