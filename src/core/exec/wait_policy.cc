#include "core/exec/wait_policy.h"

#include <sched.h>
#include <strings.h>

#include <algorithm>
#include <string>

#include "core/util/clock.h"
#include "core/util/error.h"
#include "core/util/params.h"

namespace smd {

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  return 1;
}

WaitPolicy WaitPolicy::choose(int ranks_on_node, int cpus_on_node) {
  WaitPolicy p;
  std::string mode = param_string("SMD_WAIT");
  bool oversubscribed = ranks_on_node > cpus_on_node;
  p.max_sleep_us = max_sleep_us_for(ranks_on_node, cpus_on_node);
  if (!strcasecmp(mode.c_str(), "spin")) {
    p.spin_ns = INT64_MAX;
    p.spin_yield_ns = 0;
    p.sleep = false;
  } else if (!strcasecmp(mode.c_str(), "yield")) {
    p.spin_ns = 0;
    p.yield_ns = INT64_MAX;
    p.sleep = false;
  } else if (!strcasecmp(mode.c_str(), "sleep")) {
    p.spin_ns = 2000;
    p.yield_ns = 0;
  } else if (!strcasecmp(mode.c_str(), "auto") || mode.empty()) {
    // A spinning rank steals the core the rank it waits for needs.
    if (oversubscribed) p.spin_ns = 0;
  } else {
    fail(SMD_ERR_INVALID_ARGUMENT, "SMD_WAIT=%s: expected auto, spin, yield or sleep",
         mode.c_str());
  }
  return p;
}

int64_t max_sleep_us_for(int ranks_on_node, int cpus_on_node) {
  int64_t cpus = cpus_on_node > 0 ? cpus_on_node : 1;
  int64_t us = 1000 * int64_t(ranks_on_node) / (4 * cpus);
  return std::clamp<int64_t>(us, 1000, 100000);
}

// The clock is read at the first poll, not here: most waits are over
// before they start, and a clock read costs as much as a short collective.
Backoff::Backoff(const WaitPolicy &p) : policy_(p), start_ns_(-1), last_now_ns_(-1) {}

int64_t Backoff::elapsed_ns() const { return start_ns_ < 0 ? 0 : last_now_ns_ - start_ns_; }

void Backoff::reset() {
  start_ns_ = -1;  // the clock is read at the next poll
  polls_ = 0;
  sleep_us_ = 20;
}

Backoff::Action Backoff::next(int64_t *sleep_us) {
  if (start_ns_ < 0) start_ns_ = last_now_ns_ = last_yield_ns_ = now_ns();
  ++polls_;
  // Reading the clock is dear next to one poll; while spinning, look only
  // now and then.
  if (policy_.spin_ns > 0 && (polls_ & 15) != 0 && elapsed_ns() < policy_.spin_ns)
    return Action::kSpin;
  last_now_ns_ = now_ns();
  int64_t e = elapsed_ns();
  if (e < policy_.spin_ns) {
    if (policy_.spin_yield_ns <= 0 || last_now_ns_ - last_yield_ns_ < policy_.spin_yield_ns)
      return Action::kSpin;
    last_yield_ns_ = last_now_ns_;
    return Action::kYield;
  }
  if (!policy_.sleep || e < policy_.spin_ns + policy_.yield_ns) return Action::kYield;
  *sleep_us = sleep_us_;
  if (sleep_us_ < policy_.max_sleep_us) sleep_us_ = std::min(sleep_us_ * 2, policy_.max_sleep_us);
  return Action::kSleep;
}

}  // namespace smd
