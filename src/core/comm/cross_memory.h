// Cross-memory attach: copying straight out of another process's address
// space (process_vm_readv), one copy through the kernel with no staging.
// The kernel allows it only where the reader may ptrace the target (same
// user and no Yama restriction, or CAP_SYS_PTRACE) and no seccomp filter
// blocks the call, so users probe first (Arena does, at setup).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace smd {

// Copies `bytes` from address `remote` of process `pid` into `local`,
// continuing after partial reads and interrupted calls. Returns 0, or the
// errno of the failed call (EFAULT also when the kernel copies nothing).
int cross_memory_read(pid_t pid, uint64_t remote, void *local, size_t bytes);

// The same, throwing smd::Error on failure: SMD_ERR_PEER_FAILURE when the
// peer is gone or its buffer no longer mapped (ESRCH, EFAULT), else
// SMD_ERR_SYSTEM; the message names `what` and the peer (`peer`, e.g.
// "rank 3").
void cross_memory_copy(pid_t pid, uint64_t remote, void *local, size_t bytes, const char *what,
                       const std::string &peer);

// Why cross-memory reads from `pid` fail, in words a user can act on
// (EPERM: Yama ptrace_scope, another user, a container without
// CAP_SYS_PTRACE; ENOSYS: a kernel without it or a seccomp filter).
std::string cross_memory_denied(int err);

}  // namespace smd
