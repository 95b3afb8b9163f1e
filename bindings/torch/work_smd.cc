#include "work_smd.h"

#include <ATen/core/ivalue.h>
#include <ATen/core/jit_type.h>

#include "smd_error.h"

namespace smd_torch {

WorkSmd::WorkSmd(int rank, c10d::OpType type, const char *profiling_title, std::string what,
                 std::vector<at::Tensor> outputs,
                 const c10::optional<std::vector<at::Tensor>> &inputs,
                 std::vector<c10::Device> devices)
    : c10d::Work(rank, type, profiling_title, inputs),
      what_(std::move(what)),
      outputs_(std::move(outputs)),
      future_(c10::make_intrusive<c10::ivalue::Future>(
          c10::ListType::create(c10::TensorType::get()), std::move(devices))) {}

void WorkSmd::enqueued(std::function<void()> stream_wait) {
  stream_wait_ = std::move(stream_wait);
  future_->markCompleted(c10::IValue(outputs_));
}

void WorkSmd::complete(smd_result_t rc, const std::string &message) {
  if (stream_wait_) {
    // The Future completed when the operation was enqueued.
    if (rc == SMD_SUCCESS) finish();
    else finish(std::make_exception_ptr(SmdError(rc, message)));
    return;
  }
  if (rc == SMD_SUCCESS) {
    // The Work first: a thread in wait() goes on while the Future runs
    // the callbacks chained to it (DDP's bucket finalisation) here.
    finish();
    future_->markCompleted(c10::IValue(outputs_));
    return;
  }
  auto error = std::make_exception_ptr(SmdError(rc, message));
  finish(error);
  future_->setError(error);
}

bool WorkSmd::wait(std::chrono::milliseconds timeout) {
  if (stream_wait_) {
    // NCCL's wait(): the caller's stream waits, the host goes on. An
    // error smd has reported by now is thrown.
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (exception_) std::rethrow_exception(exception_);
    }
    stream_wait_();
    return true;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  if (timeout == kNoTimeout) {
    cv_.wait(lock, [&] { return completed_; });
  } else if (!cv_.wait_for(lock, timeout, [&] { return completed_; })) {
    throw SmdError(SMD_ERR_TIMEOUT, what_ + ": wait(timeout=" + std::to_string(timeout.count()) +
                                        " ms) ran out before the operation finished (it goes on)");
  }
  if (exception_) std::rethrow_exception(exception_);
  return true;
}

void WorkSmd::synchronize() {
  if (stream_wait_) stream_wait_();
}

c10::intrusive_ptr<c10::ivalue::Future> WorkSmd::getFuture() { return future_; }

std::vector<at::Tensor> WorkSmd::result() { return outputs_; }

int WorkSmd::sourceRank() const {
  TORCH_CHECK(source_rank_ >= 0, "smd: ", what_, " is not a receive: it has no source rank");
  return source_rank_;
}

}  // namespace smd_torch
