// ProcessGroupSmd::monitoredBarrier: a barrier that says which ranks did
// not arrive. Every other rank sends rank 0 a token on the side
// communicator; rank 0 waits for them until the deadline, then either
// names the missing ranks ("Rank 1 failed to pass monitoredBarrier in
// 100 ms", gloo's wording, which torch's own tests match) or releases
// every rank with a token back. It blocks the caller, as gloo's does.
#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "process_group_smd.h"
#include "smd_error.h"

namespace smd_torch {
namespace {

// Milliseconds left until `deadline_ns` (at least 0).
int64_t left_ms(int64_t deadline_ns) {
  int64_t left = (deadline_ns - CompletionThread::now_ns()) / 1000000;
  return left > 0 ? left : 0;
}

// Waits for `r` until the deadline: SMD_SUCCESS, SMD_ERR_TIMEOUT, or the
// error it ended with.
smd_result_t wait_until(smd_request_t *r, int64_t deadline_ns) {
  return smd_request_wait_timeout(r, left_ms(deadline_ns));
}

bool arrived(smd_request_t *r, int64_t deadline_ns) {
  return wait_until(r, deadline_ns) == SMD_SUCCESS;
}

}  // namespace

void ProcessGroupSmd::monitoredBarrier(const c10d::BarrierOptions &opts, bool wait_all_ranks) {
  uint64_t seq;
  {
    std::lock_guard<std::mutex> lock(issue_mu_);
    seq = ++seq_;
  }
  const std::string what = "monitoredBarrier #" + std::to_string(seq);
  // Negative: unset (the group's); 0 is a deadline already reached, as in gloo.
  const int64_t timeout_ms = opts.timeout.count() >= 0 ? opts.timeout.count() : timeout_.count();
  const int64_t deadline_ns = CompletionThread::now_ns() + timeout_ms * 1000000;
  const int tag = side_tag(seq);
  // One byte per peer, alive until every request has ended.
  at::Tensor tokens = at::zeros({size_}, at::kByte);
  auto *bytes = tokens.data_ptr<uint8_t>();
  std::vector<smd_request_t *> requests(size_, nullptr);

  // Ends what is still pending (by aborting the group when anything is)
  // and frees every request.
  auto release = [&](bool pending) {
    if (pending) abort_communicators();
    for (auto *&r : requests)
      if (r) {
        smd_request_wait(r);
        smd_request_free(r);
        r = nullptr;
      }
  };
  auto post = [&](bool sending, int peer) {
    smd_result_t rc =
        sending ? smd_isend(&bytes[peer], 1, SMD_UINT8, peer, tag, side_, nullptr, &requests[peer])
                : smd_irecv(&bytes[peer], 1, SMD_UINT8, peer, tag, side_, nullptr, &requests[peer]);
    if (rc != SMD_SUCCESS) {
      std::string message = last_error(what);
      release(true);
      throw SmdError(rc, message);
    }
  };

  if (rank_ != 0) {
    post(true, 0);
    smd_result_t rc = wait_until(requests[0], deadline_ns);
    if (rc == SMD_SUCCESS) {
      smd_request_free(requests[0]);
      requests[0] = nullptr;
      post(false, 0);
      rc = wait_until(requests[0], deadline_ns);
    }
    release(rc != SMD_SUCCESS);
    if (rc == SMD_ERR_TIMEOUT)  // rank 0 never answered (gloo's wording)
      throw SmdError(rc, what + ": Rank 0 timed out in monitoredBarrier (rank " +
                             std::to_string(rank_) + " waited " + std::to_string(timeout_ms) +
                             " ms)");
    if (rc != SMD_SUCCESS)  // rank 0 gave up on another rank and aborted
      throw SmdError(rc, what + ": Rank " + std::to_string(rank_) +
                             " successfully reached monitoredBarrier, but received errors while "
                             "waiting for send/recv from rank 0");
    return;
  }

  for (int r = 1; r < size_; ++r) post(false, r);
  std::vector<int> missing;
  for (int r = 1; r < size_; ++r) {
    // Without wait_all_ranks, the first missing rank is enough to report,
    // and so is a deadline passed before the next rank's turn (gloo's
    // wording: rank 0 ran out of time, whoever was late).
    if (!missing.empty() && !wait_all_ranks) break;
    int done = 0;
    if (!wait_all_ranks && (timeout_ms == 0 || CompletionThread::now_ns() > deadline_ns) &&
        smd_request_test(requests[r], &done) == SMD_SUCCESS && !done) {
      release(true);
      std::string processed;
      for (int q = 1; q < r; ++q) processed += (q > 1 ? ", " : "") + std::to_string(q);
      throw SmdError(SMD_ERR_TIMEOUT,
                     what + ": Rank 0 timed out in monitoredBarrier after " +
                         std::to_string(timeout_ms) + " ms.\n" +
                         (processed.empty() ? "No ranks successfully processed in monitoredBarrier."
                                            : "Successfully processed ranks: " + processed));
    }
    if (!arrived(requests[r], deadline_ns)) missing.push_back(r);
  }
  if (!missing.empty()) {
    release(true);
    std::string ranks;
    for (int r : missing) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    throw SmdError(SMD_ERR_TIMEOUT, what + ": " + (missing.size() > 1 ? "Ranks " : "Rank ") +
                                        ranks + " failed to pass monitoredBarrier in " +
                                        std::to_string(timeout_ms) + " ms");
  }
  release(false);
  for (int r = 1; r < size_; ++r) post(true, r);
  bool ok = true;
  for (int r = 1; r < size_; ++r) ok &= arrived(requests[r], deadline_ns);
  release(!ok);
  if (!ok) throw SmdError(SMD_ERR_TIMEOUT, what + ": releasing the other ranks failed");
}

}  // namespace smd_torch
