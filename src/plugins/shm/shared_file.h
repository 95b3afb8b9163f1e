// Shared memory without names in /dev/shm: an anonymous memfd, mapped by
// its creator and by peers through /proc/<pid>/fd/<fd>. The kernel frees
// the memory when the last process holding a mapping or fd goes away, so
// nothing outlives a crash.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace smd_shm {

// A MAP_SHARED mapping, unmapped (and its fd closed, if kept) on reset.
class SharedMapping {
 public:
  SharedMapping() = default;
  SharedMapping(const SharedMapping &) = delete;
  SharedMapping &operator=(const SharedMapping &) = delete;
  ~SharedMapping() { reset(); }

  void *base() const { return base_; }
  size_t size() const { return size_; }
  int fd() const { return fd_; }
  void adopt(void *base, size_t size, int fd) {
    reset();
    base_ = base;
    size_ = size;
    fd_ = fd;
  }
  void reset();

 private:
  void *base_ = nullptr;
  size_t size_ = 0;
  int fd_ = -1;
};

// Where opening or creating shared memory failed: the step and its errno.
struct FileError {
  const char *step = nullptr;  // nullptr: success
  int err = 0;
  explicit operator bool() const { return step != nullptr; }
};

// The memfd name for an object with this id: "smd-<what>-<16 hex digits>".
void shared_name(char *out, size_t cap, const char *what, uint64_t id);

// Create a zero-filled memfd named `name` of `size` bytes and map it
// read-write; the fd stays open (peers open it through /proc).
FileError create_shared(const char *name, size_t size, SharedMapping *out);

// Map the memfd that process `pid` holds as `fd`, checking that it is the
// object named `name` of at least `size` bytes (a reused fd number or pid
// is caught here). The fd is closed after mapping.
FileError open_shared(pid_t pid, int fd, const char *name, size_t size, SharedMapping *out,
                      size_t *actual_size);

// A random 64-bit id (getrandom, with a clock fallback).
uint64_t random_id();

}  // namespace smd_shm
