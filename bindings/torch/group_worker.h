// The thread that ends a process group's smd groups. smd_group_end() runs
// the queued calls and returns when they are done, so a coalesced
// operation ended on the caller's thread would block it, unlike every
// other operation of the backend. Jobs run one at a time in the order
// added (the order operations were issued, the same on every rank).
#pragma once

#include <functional>

#include "fed_thread.h"

namespace smd_torch {

class GroupWorker : public FedThread<std::function<void()>> {
 public:
  // add(job): `job` must not throw. finish(): runs the jobs added so far,
  // then stops the thread (the destructor calls it too).
  GroupWorker() {
    start([this] { run(); });
  }
  ~GroupWorker() { finish(); }

 private:
  void run();
};

}  // namespace smd_torch
