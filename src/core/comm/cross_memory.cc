#include "core/comm/cross_memory.h"

#include <sys/uio.h>

#include <cerrno>
#include <cstring>

#include "core/util/error.h"

namespace smd {

int cross_memory_read(pid_t pid, uint64_t remote, void *local, size_t bytes) {
  size_t done = 0;
  while (done < bytes) {
    iovec to{static_cast<uint8_t *>(local) + done, bytes - done};
    iovec from{reinterpret_cast<void *>(remote + done), bytes - done};
    ssize_t n = process_vm_readv(pid, &to, 1, &from, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    // The kernel stops at the first page it cannot read and reports what
    // it copied; the next call then fails with the reason.
    if (n == 0) return EFAULT;
    done += static_cast<size_t>(n);
  }
  return 0;
}

void cross_memory_copy(pid_t pid, uint64_t remote, void *local, size_t bytes, const char *what,
                       const std::string &peer) {
  int err = cross_memory_read(pid, remote, local, bytes);
  if (err == 0) return;
  if (err == ESRCH || err == EFAULT)
    fail(SMD_ERR_PEER_FAILURE,
         "%s: %s (pid %d) exited or unmapped its buffer while this rank read %zu bytes of it "
         "(process_vm_readv: %s)",
         what, peer.c_str(), static_cast<int>(pid), bytes, strerror(err));
  fail(SMD_ERR_SYSTEM, "%s: reading %zu bytes of %s's buffer (pid %d) failed: %s", what, bytes,
       peer.c_str(), static_cast<int>(pid), cross_memory_denied(err).c_str());
}

std::string cross_memory_denied(int err) {
  std::string s = std::string("process_vm_readv: ") + strerror(err);
  if (err == EPERM)
    s += " (the kernel does not let this process read the peer's memory: Yama ptrace_scope above "
         "0, ranks of different users, or a container without CAP_SYS_PTRACE)";
  else if (err == ENOSYS)
    s += " (a kernel without cross-memory attach, or a seccomp filter that blocks it)";
  return s;
}

}  // namespace smd
