// Runs a communicator's operations one at a time in the order they were
// issued. A blocking call runs on the caller's thread when nothing is
// queued (no thread hand-off: small collectives are latency-bound); a
// nonblocking call is queued for a worker thread started on first use.
#pragma once

#include <smd.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/exec/sole_user.h"
#include "core/util/clock.h"
#include "core/util/error.h"

namespace smd {

// One queued operation and its completion.
class Task {
 public:
  explicit Task(std::function<void()> fn) : fn_(std::move(fn)) {}
  bool done() const { return done_.load(std::memory_order_acquire); }
  // Waits until done or the deadline; true if done.
  bool wait_until(const Deadline &d);
  smd_result_t result() const { return result_; }
  const std::string &error() const { return error_; }
  // Completes a task no executor runs: the request of a call queued in a
  // group, finished when its group has run.
  void complete(smd_result_t code, std::string message) { finish(code, std::move(message)); }

 private:
  friend class Executor;
  void run();
  void finish(smd_result_t code, std::string message);
  std::function<void()> fn_;
  std::atomic<bool> done_{false};
  smd_result_t result_ = SMD_SUCCESS;
  std::string error_;
  std::mutex mu_;
  std::condition_variable cv_;
};

class Executor {
 public:
  Executor() = default;
  ~Executor();
  Executor(const Executor &) = delete;
  Executor &operator=(const Executor &) = delete;

  // Run now on this thread if nothing is queued or running; otherwise
  // queue and wait. Errors propagate as smd::Error.
  template <class F>
  void run_blocking(F &&fn) {
    // Before any nonblocking call there is no queue and no worker: claiming
    // the running flag is all it takes (no lock, no notification).
    bool idle = false;
    if (!ever_queued_.load() && running_.compare_exchange_strong(idle, true)) {
      claimed_by(&this_thread_slot());
      return run_inline(fn, true);
    }
    {
      std::unique_lock<std::mutex> lock(mu_);
      idle = false;
      if (queue_.empty() && running_.compare_exchange_strong(idle, true)) {
        lock.unlock();
        claimed_by(&this_thread_slot());
        return run_inline(fn, false);
      }
    }
    auto task = submit(std::function<void()>(std::forward<F>(fn)));
    task->wait_until(Deadline::never());
    if (task->result() != SMD_SUCCESS) throw Error(task->result(), task->error());
  }

  // Queue for the worker thread; the task reports completion.
  std::shared_ptr<Task> submit(std::function<void()> fn);

  // Called by submit(); also before anything that must not run beside
  // another thread's fast call (a queued call's flight-recorder entry):
  // takes the bias away from any other thread.
  void leave_sole_use() {
    const ThreadSlot *owner = owner_.load(std::memory_order_acquire);
    if (owner != nullptr && owner != &this_thread_slot()) revoke_bias();
  }

  // Whether `slot`'s thread may run a blocking call inline without the
  // running flag (sole_user.h): the communicator is biased to it, and no
  // nonblocking call was ever queued. Asked after the slot's `inside` was
  // set; a plain read of lines only this thread writes, except rarely.
  bool biased_to(const ThreadSlot *slot) const {
    return owner_.load(std::memory_order_relaxed) == slot &&
           !bias_revoked_.load(std::memory_order_relaxed) &&
           !ever_queued_.load(std::memory_order_relaxed);
  }

  // Wait until everything queued has run (or the deadline passes).
  bool drain(const Deadline &d);
  // Stop the worker after the queue drains; later submits fail.
  void stop();

 private:
  // Runs fn on this thread with the running flag held, then gives it back
  // the way it was taken (even when fn throws).
  template <class F>
  void run_inline(F &fn, bool lock_free) {
    struct Release {
      Executor *e;
      bool lock_free;
      ~Release() { lock_free ? e->release_fast() : e->finish_inline(); }
    } release{this, lock_free};
    fn();
  }
  void finish_inline();
  // With the running flag claimed by `slot`'s thread: the first such
  // thread gets the bias; any other takes it away for good.
  void claimed_by(const ThreadSlot *slot) {
    const ThreadSlot *owner = owner_.load(std::memory_order_acquire);
    if (owner == slot) return;
    if (owner != nullptr) return revoke_bias();
    if (!bias_revoked_.load(std::memory_order_relaxed) && sole_user_enabled())
      owner_.store(slot, std::memory_order_release);
  }
  // Ends the bias: after it, its thread's fast calls see it revoked, and
  // none is still running.
  void revoke_bias();
  // The end of a lock-free inline run: wakes the worker only if a
  // nonblocking call arrived meanwhile.
  void release_fast();
  void worker_loop();
  std::mutex mu_;
  std::condition_variable cv_;       // the worker waits for work
  std::condition_variable idle_cv_;  // drain() waits for idleness
  std::deque<std::shared_ptr<Task>> queue_;
  // An operation runs (inline or on the worker); claimed by compare-exchange
  // so that the lock-free inline path and the worker exclude each other.
  std::atomic<bool> running_{false};
  std::atomic<bool> ever_queued_{false};            // set (under mu_) by the first submit
  std::atomic<const ThreadSlot *> owner_{nullptr};  // the biased thread
  std::atomic<bool> bias_revoked_{false};           // for good
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace smd
