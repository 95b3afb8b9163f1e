// What tells two processes they can share memory: the same running kernel
// (boot id) and the same PID namespace (pids in an address blob mean the
// same process to both).
#pragma once

#include <cstdint>

namespace smd_shm {

struct NodeIdentity {
  uint8_t boot_id[16];  // /proc/sys/kernel/random/boot_id
  uint64_t pid_ns;      // inode of /proc/self/ns/pid (0 if unknown)
};

// Reads this process's identity; false (with errno set) if the boot id is
// unreadable.
bool read_node_identity(NodeIdentity *out);

// The boot id as 32 hex digits (for messages).
void format_boot_id(const uint8_t id[16], char out[33]);

}  // namespace smd_shm
