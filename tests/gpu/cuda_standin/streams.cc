// The stand-in's streams: each one an ordered queue of host work run by its
// own thread, so that work really runs after the call that enqueued it
// returned, in order, and only after the work it must wait for: events
// (cudaStreamWaitEvent) and the legacy default stream's implicit
// synchronisation with the device's blocking streams (work on it waits for
// all earlier work of the blocking streams, and their later work waits for
// it). Streams are never freed (a destroyed one drains and its thread
// ends), so a stale handle is recognised rather than reused.
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "smd_cuda_standin.h"
#include "standin.h"

namespace smd_standin {

struct Stream {
  int device = 0;
  bool legacy = false;       // the device's legacy default stream
  bool nonblocking = false;  // cudaStreamNonBlocking: no implicit waits
  bool destroyed = false;
  bool running = false;                  // its front operation is being run
  uint64_t enqueued = 0, completed = 0;  // operations, numbered from 1
  int fault = kSuccess;                  // a kernel's error, until synchronised
  struct Work {
    std::function<int()> run;
    std::vector<std::pair<Stream *, uint64_t>> after;  // (stream, operation) to wait for
  };
  std::deque<Work> queue;
};

struct Event {
  Stream *stream = nullptr;  // nullptr: never recorded
  uint64_t at = 0;
  bool destroyed = false;
};

namespace {

// One lock and one condition for every stream: simple, and the stand-in
// is about order, not speed. Never destroyed: the detached workers may
// still wait on them while the process exits.
std::mutex &g_mu = *new std::mutex;
std::condition_variable &g_cv = *new std::condition_variable;
std::set<Stream *> &g_streams = *new std::set<Stream *>;  // live, besides the legacy ones
std::map<int, Stream *> &g_legacy = *new std::map<int, Stream *>;
std::set<Event *> &g_events = *new std::set<Event *>;
std::vector<Stream *> &g_retired = *new std::vector<Stream *>;  // destroyed, kept (see above)

bool done(const std::pair<Stream *, uint64_t> &w) { return w.first->completed >= w.second; }

// Whether the stream's front operation may run now; g_mu held.
bool runnable(const Stream *s) {
  if (s->running || s->queue.empty()) return false;
  for (const auto &a : s->queue.front().after)
    if (!done(a)) return false;
  return true;
}

// Runs the stream's front operation; g_mu held (released while it runs).
void run_front(Stream *s, std::unique_lock<std::mutex> &lock) {
  s->running = true;
  std::function<int()> run = std::move(s->queue.front().run);
  lock.unlock();
  const int err = run ? run() : kSuccess;
  lock.lock();
  if (err != kSuccess && s->fault == kSuccess) s->fault = err;
  s->queue.pop_front();
  s->running = false;
  ++s->completed;
  g_cv.notify_all();
}

void worker(Stream *s) {
  // Lowest priority: a thread that synchronises usually runs the work
  // itself (wait_all), without waiting for this one to be scheduled; the
  // work still runs asynchronously whenever a core is free.
  setpriority(PRIO_PROCESS, pid_t(syscall(SYS_gettid)), 19);
  std::unique_lock<std::mutex> lock(g_mu);
  for (;;) {
    g_cv.wait(lock, [&] { return runnable(s) || (s->destroyed && s->queue.empty()); });
    if (s->queue.empty()) return;  // destroyed and drained
    run_front(s, lock);
  }
}

// Waits until the operations of `waits` have run. A thread that waits runs
// ready operations of those streams itself rather than waking their
// workers: the order is the same, and two busy cores are not needed for
// every synchronisation. g_mu held.
void wait_all(const std::vector<std::pair<Stream *, uint64_t>> &waits,
              std::unique_lock<std::mutex> &lock) {
  for (;;) {
    bool all = true;
    Stream *ready = nullptr;
    for (const auto &w : waits)
      if (!done(w)) {
        all = false;
        if (runnable(w.first)) {
          ready = w.first;
        } else if (!w.first->running && !w.first->queue.empty()) {
          for (const auto &a : w.first->queue.front().after)  // what it waits for
            if (!done(a) && runnable(a.first)) ready = a.first;
        }
      }
    if (all) return;
    if (ready) run_front(ready, lock);
    else g_cv.wait(lock);
  }
}

Stream *start(int device, bool legacy, bool nonblocking) {
  auto *s = new Stream;  // never freed: see above
  s->device = device;
  s->legacy = legacy;
  s->nonblocking = nonblocking;
  std::thread(worker, s).detach();
  return s;
}

// g_mu held.
Stream *legacy_stream(int device) {
  Stream *&s = g_legacy[device];
  if (!s) s = start(device, true, false);
  return s;
}

// Enqueues with the implicit waits of the legacy default stream; g_mu held.
// Returns the operation's number.
uint64_t push(Stream *s, std::function<int()> run,
              std::vector<std::pair<Stream *, uint64_t>> after) {
  if (s->legacy) {
    for (Stream *b : g_streams)
      if (b->device == s->device && !b->nonblocking && b->enqueued > b->completed)
        after.emplace_back(b, b->enqueued);
  } else if (!s->nonblocking) {
    Stream *l = legacy_stream(s->device);
    if (l->enqueued > l->completed) after.emplace_back(l, l->enqueued);
  }
  s->queue.push_back(Stream::Work{std::move(run), std::move(after)});
  g_cv.notify_all();
  return ++s->enqueued;
}

int wait_for(Stream *s, uint64_t upto) {
  std::unique_lock<std::mutex> lock(g_mu);
  wait_all({{s, upto}}, lock);
  const int fault = s->fault;
  s->fault = kSuccess;
  return fault;
}

Event *resolve_event(void *handle) {
  auto *e = static_cast<Event *>(handle);
  return g_events.count(e) ? e : nullptr;
}

}  // namespace

Stream *resolve_stream(void *handle) {
  std::lock_guard<std::mutex> lock(g_mu);
  // 0 and cudaStreamLegacy (1): the legacy default stream; the per-thread
  // default stream (2) is not offered.
  if (handle == nullptr || handle == reinterpret_cast<void *>(1))
    return legacy_stream(current_device());
  auto *s = static_cast<Stream *>(handle);
  return g_streams.count(s) ? s : nullptr;
}

void enqueue(Stream *s, std::function<int()> work) {
  std::lock_guard<std::mutex> lock(g_mu);
  push(s, std::move(work), {});
}

int synchronize(Stream *s) {
  uint64_t upto;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    upto = s->enqueued;
  }
  return wait_for(s, upto);
}

void synchronize_device(int device) {
  std::vector<std::pair<Stream *, uint64_t>> all;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    all.emplace_back(legacy_stream(device), legacy_stream(device)->enqueued);
    for (Stream *s : g_streams)
      if (s->device == device) all.emplace_back(s, s->enqueued);
  }
  std::unique_lock<std::mutex> lock(g_mu);
  wait_all(all, lock);
}

}  // namespace smd_standin

using namespace smd_standin;

namespace {
// Kernels launched through smd_cuda_standin_launch (tests tell by it
// whether a route reduced on the "device").
std::atomic<int> g_launches{0};
// Events recorded (cudaEventRecord): the pipelined staging records one per
// chunk, the whole-buffer staging none.
std::atomic<int> g_event_records{0};
}  // namespace

extern "C" {

int cudaStreamCreateWithFlags(void **stream, unsigned flags) {
  if (!stream || flags > 1) return result(kInvalidValue);
  Stream *s = start(current_device(), false, flags & 1);
  std::lock_guard<std::mutex> lock(g_mu);
  g_streams.insert(s);
  *stream = s;
  return result(kSuccess);
}

int cudaStreamCreate(void **stream) { return cudaStreamCreateWithFlags(stream, 0); }

int cudaStreamDestroy(void *stream) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto *s = static_cast<Stream *>(stream);
  if (!g_streams.erase(s)) return result(kInvalidResourceHandle);
  s->destroyed = true;  // its work still runs; then its thread ends
  g_retired.push_back(s);
  g_cv.notify_all();
  return result(kSuccess);
}

int cudaStreamSynchronize(void *stream) {
  Stream *s = resolve_stream(stream);
  if (!s) return result(kInvalidResourceHandle);
  return result(synchronize(s));
}

int cudaStreamQuery(void *stream) {
  Stream *s = resolve_stream(stream);
  if (!s) return result(kInvalidResourceHandle);
  std::lock_guard<std::mutex> lock(g_mu);
  if (s->completed < s->enqueued) return kNotReady;  // not an error: not recorded
  const int fault = s->fault;
  s->fault = kSuccess;
  return result(fault);
}

int cudaDeviceSynchronize() {
  synchronize_device(current_device());
  return result(kSuccess);
}

int cudaEventCreateWithFlags(void **event, unsigned flags) {
  if (!event || flags > 0xf) return result(kInvalidValue);
  auto *e = new Event;
  std::lock_guard<std::mutex> lock(g_mu);
  g_events.insert(e);
  *event = e;
  return result(kSuccess);
}

int cudaEventCreate(void **event) { return cudaEventCreateWithFlags(event, 0); }

int cudaEventDestroy(void *event) {
  std::lock_guard<std::mutex> lock(g_mu);
  Event *e = resolve_event(event);
  if (!e) return result(kInvalidResourceHandle);
  g_events.erase(e);
  delete e;
  return result(kSuccess);
}

int cudaEventRecord(void *event, void *stream) {
  Stream *s = resolve_stream(stream);
  std::lock_guard<std::mutex> lock(g_mu);
  Event *e = resolve_event(event);
  if (!e || !s) return result(kInvalidResourceHandle);
  // A marker in the stream: on the legacy stream it also completes only
  // after the blocking streams' earlier work.
  e->at = push(s, nullptr, {});
  e->stream = s;
  g_event_records.fetch_add(1, std::memory_order_relaxed);
  return result(kSuccess);
}

int cudaEventQuery(void *event) {
  std::lock_guard<std::mutex> lock(g_mu);
  Event *e = resolve_event(event);
  if (!e) return result(kInvalidResourceHandle);
  return e->stream && e->stream->completed < e->at ? kNotReady : kSuccess;
}

int cudaEventSynchronize(void *event) {
  Stream *s;
  uint64_t at;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    Event *e = resolve_event(event);
    if (!e) return result(kInvalidResourceHandle);
    if (!e->stream) return result(kSuccess);
    s = e->stream;
    at = e->at;
  }
  std::unique_lock<std::mutex> lock(g_mu);
  wait_all({{s, at}}, lock);
  return result(kSuccess);
}

int cudaStreamWaitEvent(void *stream, void *event, unsigned flags) {
  Stream *s = resolve_stream(stream);
  std::lock_guard<std::mutex> lock(g_mu);
  Event *e = resolve_event(event);
  if (!s || !e) return result(kInvalidResourceHandle);
  if (flags != 0) return result(kInvalidValue);
  if (e->stream) push(s, nullptr, {{e->stream, e->at}});
  return result(kSuccess);
}

int cudaLaunchHostFunc(void *stream, void (*fn)(void *), void *arg) {
  Stream *s = resolve_stream(stream);
  if (!s) return result(kInvalidResourceHandle);
  if (!fn) return result(kInvalidValue);
  enqueue(s, [fn, arg] {
    fn(arg);
    return int(kSuccess);
  });
  return kSuccess;
}

// The driver's stream memory operation: the stream's later work waits until
// the 32-bit word at `addr` (memory the device can reach) satisfies the
// condition; only CU_STREAM_WAIT_VALUE_GEQ (0) is offered.
// SMD_CUDA_STANDIN_NO_MEMOPS=1 answers CUDA_ERROR_NOT_SUPPORTED, as a
// device without stream memory operations does.
int cuStreamWaitValue32_v2(void *stream, uint64_t addr, uint32_t value, unsigned flags) {
  static const bool unsupported = [] {
    const char *v = getenv("SMD_CUDA_STANDIN_NO_MEMOPS");
    return v && *v == '1';
  }();
  if (unsupported) return 801;
  Stream *s = resolve_stream(stream);
  if (!s) return 400;  // CUDA_ERROR_INVALID_HANDLE
  auto *word = reinterpret_cast<const uint32_t *>(uintptr_t(addr));
  if (flags != 0 || addr % 4 || !device_accessible(word, 4)) return 1;  // CUDA_ERROR_INVALID_VALUE
  enqueue(s, [word, value] {
    // The device polls the word; here, with back-off.
    for (unsigned us = 1; int32_t(__atomic_load_n(word, __ATOMIC_ACQUIRE) - value) < 0;
         us = us < 1000 ? us * 2 : us)
      std::this_thread::sleep_for(std::chrono::microseconds(us));
    return int(kSuccess);
  });
  return 0;
}

int smd_cuda_standin_launch(void *stream, int (*kernel)(void *), void *arg,
                            void (*release)(void *)) {
  Stream *s = resolve_stream(stream);
  if (!s || !kernel) {
    if (release) release(arg);
    return result(s ? kInvalidValue : kInvalidResourceHandle);
  }
  g_launches.fetch_add(1, std::memory_order_relaxed);
  enqueue(s, [kernel, arg, release] {
    const int err = kernel(arg);
    if (release) release(arg);
    return err;
  });
  return kSuccess;
}

int smd_cuda_standin_delay(void *stream, unsigned microseconds) {
  Stream *s = resolve_stream(stream);
  if (!s) return result(kInvalidResourceHandle);
  enqueue(s, [microseconds] {
    std::this_thread::sleep_for(std::chrono::microseconds(microseconds));
    return int(kSuccess);
  });
  return kSuccess;
}

int smd_cuda_standin_kernel_launches(void) { return g_launches.load(std::memory_order_relaxed); }

int smd_cuda_standin_event_records(void) { return g_event_records.load(std::memory_order_relaxed); }

}  // extern "C"
