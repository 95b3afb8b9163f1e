// File-descriptor plumbing smdrun needs: an owning fd, a write-everything
// sink for smdrun's own stdout/stderr, and standard-fd sanity at start-up.
#pragma once

#include <string_view>

namespace smdrun {

// Owns one file descriptor; closes it when destroyed. Move-only.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd &&other) noexcept : fd_(other.release()) {}
  UniqueFd &operator=(UniqueFd &&other) noexcept;
  UniqueFd(const UniqueFd &) = delete;
  UniqueFd &operator=(const UniqueFd &) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release();
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// One of smdrun's own outputs. Writes block until complete (that is the
// back-pressure a slow reader of smdrun puts on chatty ranks); once the
// reader is gone (EPIPE) further output is dropped so the job still runs
// to completion and its exit status is kept.
class OutputSink {
 public:
  explicit OutputSink(int fd) : fd_(fd) {}
  void write(std::string_view data);

 private:
  int fd_;
  bool broken_ = false;
};

// Opens /dev/null on any of fds 0-2 that is closed, so pipes created later
// never land on a standard fd number (dup2 onto the same fd would keep
// its close-on-exec flag and the rank would lose that stream).
void ensure_standard_fds();

}  // namespace smdrun
