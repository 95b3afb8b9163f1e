// A thread fed through a queue, the shape of the backend's two worker
// threads (the completion thread and the group worker): add() appends an
// item under the lock and wakes the thread; finish() asks it to stop once
// it has drained its queue, and joins it. The derived class starts the
// thread (start()) once its own members exist, and calls finish() in its
// destructor.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace smd_torch {

template <class Item>
class FedThread {
 public:
  FedThread(const FedThread &) = delete;
  FedThread &operator=(const FedThread &) = delete;

  void add(Item item) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(std::move(item));
    }
    cv_.notify_one();
  }

  void finish() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

 protected:
  FedThread() = default;
  ~FedThread() = default;
  void start(std::function<void()> body) { thread_ = std::thread(std::move(body)); }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  bool stopping_ = false;

 private:
  std::thread thread_;
};

}  // namespace smd_torch
