// Point-to-point on device memory with a stream (docs/GPU.md, "Streams"):
// queued on the communicator's stream proxy as the collectives are, so a
// send reads what the stream wrote before the call and a receive's data is
// there for the stream's later work. The proxy stages the payload through
// pinned host memory and moves it with the user matcher. So that a size
// that differs fails on both sides: a stream-ordered send asks its
// receiver for a receipt, and a stream-ordered receive takes exactly its
// count (its caller cannot ask for the count before the stream has run).
#pragma once

#include <cstddef>
#include <memory>

#include "core/exec/executor.h"

namespace smd {

class Comm;

std::shared_ptr<Task> send_on_stream(Comm &c, const void *buf, size_t bytes, int peer, int tag,
                                     void *stream);
std::shared_ptr<Task> recv_on_stream(Comm &c, void *buf, size_t bytes, int peer, int tag,
                                     void *stream);

}  // namespace smd
