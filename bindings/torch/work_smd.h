// The c10d::Work of one smd operation: what torch waits on, tests, and
// chains futures to (DDP's gradient buckets wait on getFuture()).
// The completion thread calls complete() once; everything else is torch's
// Work protocol. A stream-ordered operation on CUDA tensors is NCCL's
// kind of Work: its Future completes once the operation is enqueued, and
// wait() makes the caller's current stream wait for it without blocking
// the host; complete() still reports smd's errors to wait() and
// isCompleted().
#pragma once

#include <smd.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <functional>
#include <string>
#include <vector>

namespace smd_torch {

class WorkSmd : public c10d::Work {
 public:
  // `profiling_title` must be a string literal (the profiler keeps the
  // pointer); `what` ("allreduce #12") names the operation in messages;
  // `outputs` become result() and the Future's value; `devices` are the
  // CUDA devices of a stream-ordered operation (none on the host).
  WorkSmd(int rank, c10d::OpType type, const char *profiling_title, std::string what,
          std::vector<at::Tensor> outputs, const c10::optional<std::vector<at::Tensor>> &inputs,
          std::vector<c10::Device> devices = {});

  // A stream-ordered operation is enqueued: the Future completes with the
  // outputs (recording their streams, as ProcessGroupNCCL's does), and
  // `stream_wait` is what wait() and synchronize() run.
  void enqueued(std::function<void()> stream_wait);

  // Ends the Work: SMD_SUCCESS, or an smd error whose message torch
  // rethrows from wait() and the Future.
  void complete(smd_result_t rc, const std::string &message);

  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
  void synchronize() override;
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
  std::function<void()> stream_wait_;
};

}  // namespace smd_torch
