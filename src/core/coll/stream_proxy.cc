#include "core/coll/stream_proxy.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>

#include "core/comm/communicator.h"
#include "core/gpu/cuda_api.h"
#include "core/gpu/device_ops.h"
#include "core/gpu/pointer_kind.h"
#include "core/util/clock.h"
#include "core/util/error.h"
#include "core/util/log.h"

namespace smd {

class StreamProxy {
 public:
  explicit StreamProxy(const gpu::CudaApi &api) : api_(api) {
    void *p = nullptr;
    if (!api.HostAlloc || !api.HostGetDevicePointer)
      fail(SMD_ERR_NOT_SUPPORTED,
           "stream-ordered calls need cudaHostAlloc and cudaHostGetDevicePointer, which the CUDA "
           "runtime lacks");
    gpu::cuda_check("cudaHostAlloc",
                    api.HostAlloc(&p, sizeof(uint32_t),
                                  gpu::kCudaHostAllocMapped | gpu::kCudaHostAllocPortable));
    word_ = static_cast<uint32_t *>(p);
    __atomic_store_n(word_, 0u, __ATOMIC_RELEASE);
    void *dev = nullptr;
    const gpu::cuda_error_t err = api.HostGetDevicePointer(&dev, p, 0);
    if (err != 0) {
      api.FreeHost(p);
      gpu::cuda_check("cudaHostGetDevicePointer", err);
    }
    word_device_ = reinterpret_cast<uintptr_t>(dev);
    memops_ = api.cuStreamWaitValue32 != nullptr;
    SMD_INFO("coll", "stream-ordered calls hold their stream with %s",
             memops_ ? "cuStreamWaitValue32 on a mapped word" : "a blocking cudaLaunchHostFunc");
  }

  ~StreamProxy() {
    // Every call was released by its task (the executor drained before);
    // this frees a stream a refused submit left waiting, before the free.
    release(issued_);
    for (auto &[device, stream] : streams_) api_.StreamDestroy(stream);
    api_.FreeHost(word_);  // waits for the device's streams, which are all released now
  }

  // Serialises numbering, enqueueing and submitting: the numbers must reach
  // the executor in order, since the word only grows.
  std::mutex &issue_mu() { return issue_mu_; }
  uint32_t next_number() { return ++issued_; }

  // Makes `stream`'s later work wait until call `n` is released.
  void hold(void *stream, uint32_t n) {
    if (memops_) {
      const int err = api_.cuStreamWaitValue32(stream, word_device_, n, gpu::kCuStreamWaitValueGeq);
      if (err == 0) return;
      if (err != gpu::kCuErrorNotSupported)
        fail(SMD_ERR_SYSTEM, "cuStreamWaitValue32: CUDA driver error %d", err);
      memops_ = false;  // the device has none: host functions from now on
      SMD_INFO("coll",
               "cuStreamWaitValue32 is not supported here: stream-ordered calls hold their "
               "stream with a blocking cudaLaunchHostFunc instead");
    }
    if (!api_.LaunchHostFunc)
      fail(SMD_ERR_NOT_SUPPORTED,
           "stream-ordered calls need stream memory operations or cudaLaunchHostFunc; this CUDA "
           "has neither");
    auto *wait = new HostWait{released_, n};
    const gpu::cuda_error_t err = api_.LaunchHostFunc(stream, &HostWait::run, wait);
    if (err != 0) {
      delete wait;
      gpu::cuda_check("cudaLaunchHostFunc", err);
    }
  }

  // Lets the streams waiting for calls up to `n` go on.
  void release(uint32_t n) {
    __atomic_store_n(word_, n, __ATOMIC_RELEASE);
    std::lock_guard<std::mutex> lock(released_->mu);
    released_->n = n;
    released_->cv.notify_all();
  }

  // The proxy's own stream on `device` (worker thread only): non-blocking,
  // so that it never waits for the callers' streams, which wait for it.
  void *internal_stream(int device) {
    void *&s = streams_[device];
    if (!s) {
      gpu::DeviceScope on(device);
      gpu::cuda_check("cudaStreamCreateWithFlags",
                      api_.StreamCreateWithFlags(&s, gpu::kCudaStreamNonBlocking));
    }
    return s;
  }

 private:
  // The last number released, for the fallback; apart from the proxy, so
  // that a host function that outlives it frees no CUDA resource in
  // CUDA's callback thread (which must not call CUDA).
  struct Released {
    std::mutex mu;
    std::condition_variable cv;
    uint32_t n = 0;
  };
  // The fallback: a host function on the caller's stream that blocks
  // until its call is released (the word's cyclic comparison, as the
  // stream memory operation's).
  struct HostWait {
    std::shared_ptr<Released> released;
    uint32_t n;
    static void run(void *arg) {
      auto *w = static_cast<HostWait *>(arg);
      {
        Released &r = *w->released;
        std::unique_lock<std::mutex> lock(r.mu);
        r.cv.wait(lock, [&] { return int32_t(r.n - w->n) >= 0; });
      }
      delete w;
    }
  };

  const gpu::CudaApi &api_;
  uint32_t *word_ = nullptr;
  uintptr_t word_device_ = 0;
  bool memops_ = false;
  std::mutex issue_mu_;
  uint32_t issued_ = 0;
  std::shared_ptr<Released> released_ = std::make_shared<Released>();
  std::map<int, void *> streams_;
};

namespace {

// Waits for the caller's work enqueued before the call: queries with
// back-off (no core spinning per call), bounded by SMD_TIMEOUT and ended
// by an abort of the communicator.
void wait_event(Comm &c, const gpu::CudaApi &api, void *event) {
  const Deadline deadline = Deadline::after_ms(c.ctx().timeout_ms());
  for (int64_t us = 1;; us = us < 1000 ? us * 2 : us) {
    const gpu::cuda_error_t err = api.EventQuery(event);
    if (err == 0) return;
    if (err != gpu::kCudaErrorNotReady) gpu::cuda_check("cudaEventQuery", err);
    if (c.aborted())
      fail(c.end_code(), "%s was ended while its call waited for its stream", c.where().c_str());
    if (deadline.expired())
      fail(SMD_ERR_TIMEOUT,
           "%s: the work enqueued on the stream before the call did not finish within "
           "%.1f s (SMD_TIMEOUT)",
           c.where().c_str(), double(c.ctx().timeout_ms()) / 1000);
    std::this_thread::sleep_for(std::chrono::microseconds(us));
  }
}

}  // namespace

std::shared_ptr<Task> run_on_stream(Comm &c, const CollArgs &a, void *stream) {
  const int device = gpu::classify_pointer(a.recvbuf ? a.recvbuf : a.sendbuf).device;
  Comm *raw = &c;  // the executor, inside the communicator, drains before it goes
  return run_work_on_stream(c, device, stream, [raw, a] { run_collective(*raw, a); });
}

std::shared_ptr<Task> run_work_on_stream(Comm &c, int device, void *stream,
                                         std::function<void()> work) {
  const gpu::CudaApi *api = gpu::cuda_api();
  if (!api)
    fail(SMD_ERR_NOT_SUPPORTED, "device memory needs CUDA: %s", gpu::cuda_status().reason.c_str());
  std::shared_ptr<StreamProxy> proxy =
      c.stream_proxy([api] { return std::make_shared<StreamProxy>(*api); });
  void *event = nullptr;
  {
    // NULL: the legacy default stream of the buffers' GPU, as the staged
    // route's own copies would use.
    gpu::DeviceScope on_device(stream ? -1 : device);
    gpu::cuda_check("cudaEventCreateWithFlags",
                    api->EventCreateWithFlags(&event, gpu::kCudaEventDisableTiming));
    gpu::cuda_error_t err = api->EventRecord(event, stream);
    if (err != 0) {
      api->EventDestroy(event);
      gpu::cuda_check("cudaEventRecord", err);
    }
  }
  std::lock_guard<std::mutex> lock(proxy->issue_mu());
  const uint32_t n = proxy->next_number();
  Comm *raw = &c;  // the executor, inside the communicator, drains before it goes
  const bool held = stream != nullptr;
  auto task =
      c.executor().submit([raw, api, proxy, n, device, event, held, work = std::move(work)] {
        struct Release {  // whatever happens: a failed call must not hang the stream
          StreamProxy &proxy;
          uint32_t n;
          const gpu::CudaApi *api;
          void *event;
          ~Release() {
            api->EventDestroy(event);
            proxy.release(n);
          }
        } release{*proxy, n, api, event};
        try {
          wait_event(*raw, *api, event);
          gpu::DeviceScope on_device(device);
          gpu::StreamScope on_stream(proxy->internal_stream(device));
          work();
        } catch (const Error &e) {
          // The stream's later work runs on whatever the buffers hold: later
          // calls must not succeed as if this one had (never silently wrong).
          // A NULL-stream call's request is all there is to tell, as before.
          if (held) raw->poison(e.code(), e.message());
          throw;
        }
      });
  // A refused submit (the communicator is being destroyed) never runs: its
  // task is finished already, and the stream must not wait for it; the
  // caller learns of it now (as of a call that already failed).
  if (task->done()) {
    proxy->release(n);
    if (task->result() != SMD_SUCCESS) throw Error(task->result(), task->error());
    return task;
  }
  if (!stream) return task;  // a nonblocking NULL-stream call: nothing to hold
  try {
    proxy->hold(stream, n);
  } catch (const Error &e) {
    // The call runs, but the stream would not wait for it.
    c.poison(e.code(), e.message());
    throw;
  }
  return task;
}

void wait_for_stream(void *stream) {
  const gpu::CudaApi *api = gpu::cuda_api();
  if (!api)
    fail(SMD_ERR_NOT_SUPPORTED, "a stream needs CUDA: %s", gpu::cuda_status().reason.c_str());
  gpu::cuda_check("cudaStreamSynchronize", api->StreamSynchronize(stream));
}

}  // namespace smd
