// The thread that ends a process group's smd groups. smd_group_end() runs
// the queued calls and returns when they are done, so a coalesced
// operation ended on the caller's thread would block it, unlike every
// other operation of the backend. Jobs run one at a time in the order
// added (the order operations were issued, the same on every rank).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace smd_torch {

class GroupWorker {
 public:
  GroupWorker();
  ~GroupWorker();
  GroupWorker(const GroupWorker &) = delete;
  GroupWorker &operator=(const GroupWorker &) = delete;

  // `job` must not throw.
  void add(std::function<void()> job);

  // Runs the jobs added so far, then stops the thread. Called by the
  // destructor too.
  void finish();

 private:
  void run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace smd_torch
