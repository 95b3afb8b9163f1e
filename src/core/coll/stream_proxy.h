// Stream-ordered collectives on device memory (docs/GPU.md, "Streams").
// The call records an event on the caller's stream and makes the stream
// wait until a 32-bit word in pinned, device-mapped host memory reaches the
// call's number (a stream memory operation, or a host function blocking on
// the proxy's condition where the device has none); the communicator's
// worker thread, the proxy, runs the calls in issue order (FIFO, so every
// rank runs them in the same order): waits for the event with back-off,
// runs the device route on an internal non-blocking stream, and writes the
// word, whatever happened, so that a failed call never hangs the stream.
#pragma once

#include <functional>
#include <memory>

#include "core/coll/collective.h"
#include "core/exec/executor.h"

namespace smd {

// Enqueues `a` (device buffers) on `stream` and returns the proxy's task,
// which completes when the collective has finished (a request's). A
// failure in the proxy poisons the communicator: its next call reports it.
// With a NULL stream (a nonblocking call), the proxy waits for the work
// enqueued before the call on the legacy default stream and holds no
// stream: the caller waits for the request. It never enqueues on the
// legacy stream itself, which would wait for blocking streams that wait
// for the proxy's later calls.
std::shared_ptr<Task> run_on_stream(Comm &c, const CollArgs &a, void *stream);

// The same for any work on buffers of GPU `device` (stream_p2p.h): `work`
// runs on the proxy's thread, after the stream's earlier work, with
// `device` current and the proxy's own stream as the thread's stream.
std::shared_ptr<Task> run_work_on_stream(Comm &c, int device, void *stream,
                                         std::function<void()> work);

// Host memory with a stream: waits on the host until the stream's work
// enqueued so far has run, so the host work that follows is ordered after it.
void wait_for_stream(void *stream);

}  // namespace smd
