#include "core/exec/executor.h"

#include <new>

namespace smd {

void Task::run() {
  try {
    fn_();
    finish(SMD_SUCCESS, "");
  } catch (const Error &e) {
    finish(e.code(), e.message());
  } catch (const std::bad_alloc &) {
    finish(SMD_ERR_NO_MEMORY, "out of memory");
  } catch (const std::exception &e) {
    finish(SMD_ERR_INTERNAL, std::string("internal error: ") + e.what());
  }
  fn_ = nullptr;  // release captured buffers and communicator references
}

void Task::finish(smd_result_t code, std::string message) {
  std::lock_guard<std::mutex> lock(mu_);
  result_ = code;
  error_ = std::move(message);
  done_.store(true, std::memory_order_release);
  cv_.notify_all();
}

bool Task::wait_until(const Deadline &d) {
  if (done()) return true;
  std::unique_lock<std::mutex> lock(mu_);
  while (!done()) {
    if (d.at_ns() == INT64_MAX) {
      cv_.wait(lock);
    } else {
      int64_t ms = d.remaining_ms();
      if (ms <= 0 && d.expired()) return done();
      cv_.wait_for(lock, std::chrono::milliseconds(ms > 0 ? ms : 1));
    }
  }
  return true;
}

Executor::~Executor() { stop(); }

void Executor::finish_inline() {
  std::lock_guard<std::mutex> lock(mu_);
  running_ = false;
  if (!queue_.empty()) cv_.notify_one();
  else idle_cv_.notify_all();
}

void Executor::release_fast() {
  // Sequentially consistent with submit(): either it sees running_ false
  // (and its worker claims the flag), or this sees ever_queued_ and wakes
  // the worker under the lock.
  running_.store(false);
  if (!ever_queued_.load()) return;
  // Not finish_inline(): the worker may have claimed the flag already.
  std::lock_guard<std::mutex> lock(mu_);
  if (!queue_.empty()) cv_.notify_one();
  else idle_cv_.notify_all();
}

void Executor::revoke_bias() {
  bias_revoked_.store(true);
  fence_all_threads();
  wait_until_nobody_inside(this);
  owner_.store(nullptr, std::memory_order_release);
}

std::shared_ptr<Task> Executor::submit(std::function<void()> fn) {
  // The worker must not run beside a fast call of another thread.
  leave_sole_use();
  auto task = std::make_shared<Task>(std::move(fn));
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) {
    task->finish(SMD_ERR_INVALID_USAGE, "the communicator is being destroyed");
    return task;
  }
  ever_queued_.store(true);
  queue_.push_back(task);
  if (!worker_.joinable()) worker_ = std::thread([this] { worker_loop(); });
  cv_.notify_one();
  return task;
}

void Executor::worker_loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] {
      if (queue_.empty()) return stopping_;
      bool idle = false;  // claim the flag against a lock-free inline run
      return running_.compare_exchange_strong(idle, true);
    });
    if (queue_.empty()) return;  // stopping and drained
    auto task = queue_.front();
    queue_.pop_front();
    lock.unlock();
    task->run();
    lock.lock();
    running_ = false;
    if (queue_.empty()) idle_cv_.notify_all();
  }
}

bool Executor::drain(const Deadline &d) {
  std::unique_lock<std::mutex> lock(mu_);
  while (running_ || !queue_.empty()) {
    int64_t ms = d.remaining_ms();
    if (d.expired()) return false;
    idle_cv_.wait_for(lock, std::chrono::milliseconds(ms > 100 ? 100 : (ms > 0 ? ms : 1)));
  }
  return true;
}

void Executor::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  if (worker_.joinable() && worker_.get_id() != std::this_thread::get_id()) worker_.join();
  else if (worker_.joinable()) worker_.detach();
}

}  // namespace smd
