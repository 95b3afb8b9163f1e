// How a rank waits for something another rank will do: spin briefly (the
// answer usually comes within microseconds), then hand the core to others
// with sched_yield (vital when ranks outnumber cores), then sleep in the
// kernel with growing timeouts. SMD_WAIT overrides the automatic choice.
#pragma once

#include <cstdint>

namespace smd {

struct WaitPolicy {
  int64_t spin_ns = 20000;  // busy-poll this long first
  // While spinning, yield once every this long: if the rank waited for was
  // scheduled on this very core (the kernel does that now and then even
  // with a core idle), a pure spin would keep it off the core for the whole
  // spin; a yield with nobody else to run costs a fraction of a microsecond.
  int64_t spin_yield_ns = 1000;
  int64_t yield_ns = 2000000;  // then sched_yield until this much time passed
  bool sleep = true;           // then sleep (futex / plugin wait)
  // The longest single sleep. Sleeps end early when a transport or the
  // arena rings; the timeout is the fallback, and every timeout wakes a
  // thread: ranks far beyond the CPUs sleep longer so that their wakeups
  // together stay near 1,000 a second per CPU.
  int64_t max_sleep_us = 1000;

  // From SMD_WAIT and whether the node's ranks outnumber the CPUs they may
  // run on together (cpus_on_node: the union of their CPU sets).
  static WaitPolicy choose(int ranks_on_node, int cpus_on_node);
};

// CPUs this process may run on (sched_getaffinity).
int usable_cpus();

// The phase a wait is in, and what to do next; cheap to call every poll.
class Backoff {
 public:
  explicit Backoff(const WaitPolicy &p);
  enum class Action { kSpin, kYield, kSleep };
  // What to do at this poll; also tells how long a sleep may be.
  Action next(int64_t *sleep_us);
  int64_t elapsed_ns() const;
  // Whether this wait is past its spinning phase (yielding or sleeping).
  bool past_spin() const { return elapsed_ns() >= policy_.spin_ns; }
  bool may_sleep() const { return policy_.sleep; }
  uint32_t polls() const { return polls_; }
  // Start a new episode: spin first again.
  void reset();

 private:
  WaitPolicy policy_;
  int64_t start_ns_;
  int64_t last_now_ns_;
  int64_t last_yield_ns_ = 0;
  uint32_t polls_ = 0;
  int64_t sleep_us_ = 20;
};

// The longest sleep for ranks_on_node ranks sharing cpus_on_node CPUs:
// 1 ms up to 4 ranks per CPU, then growing with the ratio, at most 100 ms.
int64_t max_sleep_us_for(int ranks_on_node, int cpus_on_node);

}  // namespace smd
