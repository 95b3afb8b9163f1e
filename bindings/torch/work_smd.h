// The c10d::Work of one smd operation: what torch waits on, tests, and
// chains futures to (DDP's gradient buckets wait on getFuture()).
// The completion thread calls complete() once; everything else is torch's
// Work protocol.
#pragma once

#include <smd.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <string>
#include <vector>

namespace smd_torch {

class WorkSmd : public c10d::Work {
 public:
  // `profiling_title` must be a string literal (the profiler keeps the
  // pointer); `what` ("allreduce #12") names the operation in messages;
  // `outputs` become result() and the Future's value.
  WorkSmd(int rank, c10d::OpType type, const char *profiling_title, std::string what,
          std::vector<at::Tensor> outputs, const c10::optional<std::vector<at::Tensor>> &inputs);

  // Ends the Work: SMD_SUCCESS, or an smd error whose message torch
  // rethrows from wait() and the Future.
  void complete(smd_result_t rc, const std::string &message);

  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;
  std::vector<at::Tensor> result() override;
  int sourceRank() const override;

  void set_source_rank(int rank) { source_rank_ = rank; }
  const std::string &what() const { return what_; }

 private:
  std::string what_;
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  int source_rank_ = -1;
};

}  // namespace smd_torch
