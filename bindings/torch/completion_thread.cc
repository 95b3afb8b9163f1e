#include "completion_thread.h"

#include <sched.h>

#include <algorithm>
#include <chrono>

#include "exit_guard.h"
#include "smd_error.h"

namespace smd_torch {

// One operation being watched: which requests still run, and the first
// failure among those that ended.
struct CompletionThread::Active {
  std::unique_ptr<PendingOp> op;
  size_t next = 0;  // requests before this one have ended
  smd_result_t rc = SMD_SUCCESS;
  std::string message;
  bool timed_out = false;
};

namespace {

// Collectives run on smd's own worker thread, so blocking on one costs
// nothing; the slice bounds how late a newly added point-to-point
// operation is first polled.
constexpr int64_t kWaitSliceMs = 5;

}  // namespace

int64_t CompletionThread::now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

CompletionThread::CompletionThread(std::function<void()> on_timeout)
    : on_timeout_(std::move(on_timeout)) {
  start([this] { run(); });
}

// Tests the requests that still run, in order; true once all have ended.
bool CompletionThread::advance(Active &a) {
  auto &requests = a.op->requests;
  while (a.next < requests.size()) {
    int done = 0;
    smd_result_t rc = smd_request_test(requests[a.next], &done);
    if (!done && rc == SMD_SUCCESS) return false;
    if (rc != SMD_SUCCESS && a.rc == SMD_SUCCESS) {
      a.rc = rc;
      a.message = last_error(a.op->what);
    }
    ++a.next;
  }
  return true;
}

void CompletionThread::complete(Active &a) {
  try {
    if (a.op->inspect) a.op->inspect(a.op->requests.data(), a.op->requests.size());
  } catch (...) {
  }
  for (smd_request_t *r : a.op->requests) smd_request_free(r);
  a.op->requests.clear();
  smd_result_t rc = a.rc;
  std::string message = a.message;
  if (rc != SMD_SUCCESS && (a.timed_out || rc == SMD_ERR_TIMEOUT)) {
    // The communicator carries the group's timeout too, so smd's own
    // deadline may end the request before this thread's does; either way
    // the message has the wording gloo uses and torch's own tests match
    // (` (Timed out|closed|timeout) `), and smd's detail when it has one.
    const std::string cause =
        a.timed_out ? "the process group is aborted, so later operations on it fail" : message;
    rc = SMD_ERR_TIMEOUT;
    message = a.op->what + ": Timed out after " + std::to_string(a.op->timeout_ms) +
              " ms (the process group's timeout); " + cause;
  } else if (rc == SMD_ERR_ABORTED && !abort_reason_.empty()) {
    message += " (" + abort_reason_ + ")";
  }
  // on_done catches what it throws; this guard keeps the thread alive if
  // it ever does not.
  try {
    if (a.op->on_done) a.op->on_done(rc, message);
  } catch (...) {
  }
}

void CompletionThread::check_deadlines(std::vector<std::unique_ptr<Active>> &active) {
  const int64_t now = now_ns();
  bool expired = false;
  for (auto &a : active) {
    if (a->timed_out || now < a->op->deadline_ns) continue;
    a->timed_out = true;
    if (abort_reason_.empty()) {
      abort_reason_ = a->op->what + " timed out";
      expired = true;
    }
  }
  // Once is enough: the abort ends every request of the communicators.
  if (expired && on_timeout_) on_timeout_();
}

// Nothing ended this round: wait without burning the core the training
// step needs.
void CompletionThread::wait_a_little(std::vector<std::unique_ptr<Active>> &active,
                                     int &idle_rounds) {
  bool polling =
      std::any_of(active.begin(), active.end(), [](const auto &a) { return a->op->needs_polling; });
  if (!polling) {
    Active &oldest = *active.front();
    int64_t left_ms = (oldest.op->deadline_ns - now_ns()) / 1000000;
    int64_t slice = std::clamp<int64_t>(left_ms, 0, kWaitSliceMs);
    // The result is read by advance() on the next round.
    (void)smd_request_wait_timeout(oldest.op->requests[oldest.next], slice);
    return;
  }
  ++idle_rounds;
  if (idle_rounds < 64) {
    sched_yield();
  } else {
    int64_t us = std::min<int64_t>(1000, 20LL << std::min(idle_rounds - 64, 6));
    std::this_thread::sleep_for(std::chrono::microseconds(us));
  }
}

void CompletionThread::run() {
  std::vector<std::unique_ptr<Active>> active;
  int idle_rounds = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (active.empty()) cv_.wait(lock, [&] { return !queue_.empty() || stopping_; });
      for (auto &op : queue_) {
        auto a = std::make_unique<Active>();
        a->op = std::move(op);
        active.push_back(std::move(a));
      }
      queue_.clear();
      if (active.empty() && stopping_) return;
    }
    bool progressed = false;
    for (auto it = active.begin(); it != active.end();) {
      if (advance(**it)) {
        ReleaseScope releasing;  // the Work completes: Python may head for exit
        complete(**it);
        it = active.erase(it);  // the operation's Work and tensors go here
        progressed = true;
      } else {
        ++it;
      }
    }
    if (progressed) {
      idle_rounds = 0;
      continue;
    }
    if (active.empty()) continue;
    check_deadlines(active);
    wait_a_little(active, idle_rounds);
  }
}

}  // namespace smd_torch
