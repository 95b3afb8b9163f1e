// The thread that watches a process group's smd requests and completes
// each operation when its requests end: success, smd's error, or the
// operation's deadline. Knows nothing of torch; an operation's on_done
// does the torch side (copy results out, complete the Work and Future).
#pragma once

#include <smd.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fed_thread.h"

namespace smd_torch {

struct PendingOp {
  // "allreduce #12": names the operation in messages.
  std::string what;
  // Started smd requests, owned from now on: each is freed once it ends.
  std::vector<smd_request_t *> requests;
  // Point-to-point requests advance only while tested, so an operation
  // with any of them is polled rather than waited for.
  bool needs_polling = false;
  // steady_clock nanoseconds after which the operation has timed out.
  int64_t deadline_ns = INT64_MAX;
  // How long the deadline was, for the message.
  int64_t timeout_ms = 0;
  // Called once, on the completion thread, when every request has ended:
  // SMD_SUCCESS, or the first failure with its message.
  std::function<void(smd_result_t rc, const std::string &message)> on_done;
  // Optional: called once every request has ended, before they are freed.
  std::function<void(smd_request_t *const *requests, size_t n)> inspect;
};

class CompletionThread : public FedThread<std::unique_ptr<PendingOp>> {
 public:
  // `on_timeout` runs on this thread when an operation passes its
  // deadline: the owner aborts its communicators there, which ends every
  // pending request (here and, through smd, on the peers) with an error.
  explicit CompletionThread(std::function<void()> on_timeout);
  ~CompletionThread() { finish(); }
  // finish(): waits until every operation added so far has ended (each
  // has a deadline), then stops the thread.

  // steady_clock nanoseconds now, the clock of PendingOp::deadline_ns.
  static int64_t now_ns();

 private:
  struct Active;
  void run();
  bool advance(Active &a);
  void complete(Active &a);
  void check_deadlines(std::vector<std::unique_ptr<Active>> &active);
  void wait_a_little(std::vector<std::unique_ptr<Active>> &active, int &idle_rounds);

  std::function<void()> on_timeout_;
  // Set on this thread when a deadline passed; later failures name it.
  std::string abort_reason_;
};

}  // namespace smd_torch
