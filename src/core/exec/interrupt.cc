#include "core/exec/interrupt.h"

#include <signal.h>
#include <unistd.h>

namespace smd {

thread_local bool tls_interrupt_call_started = false;

namespace {
thread_local int interrupt_fd = -1;
thread_local int64_t next_look_ns = 0;
// A read costs a system call: a wait that has lasted past its spinning
// phase looks once a millisecond, far below what a person notices.
constexpr int64_t kLookEveryNs = 1000000;
}  // namespace

int set_interrupt_fd(int fd) {
  int previous = interrupt_fd;
  interrupt_fd = fd;
  next_look_ns = 0;
  return previous;
}

bool interrupt_requested(int64_t now_ns) {
  if (interrupt_fd < 0) return false;
  bool stale = tls_interrupt_call_started;
  if (!stale && now_ns < next_look_ns) return false;
  tls_interrupt_call_started = false;
  next_look_ns = now_ns + kLookEveryNs;
  unsigned char bytes[64];
  bool sigint = false;
  for (;;) {  // the fd is nonblocking: read until it is empty
    ssize_t n = read(interrupt_fd, bytes, sizeof bytes);
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) sigint = sigint || bytes[i] == SIGINT;
    if (n < static_cast<ssize_t>(sizeof bytes)) break;
  }
  return sigint && !stale;
}

}  // namespace smd
