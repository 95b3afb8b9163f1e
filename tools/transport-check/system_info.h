// What the operating system says about memory: room for large tests, and
// shared memory a plugin may have left behind.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tcheck {

// MemAvailable from /proc/meminfo (0 if unknown).
uint64_t memory_available_bytes();

// The names in /dev/shm, sorted.
std::vector<std::string> list_dev_shm();

// Names in `after` that are not in `before` (both sorted).
std::vector<std::string> added_names(const std::vector<std::string> &before,
                                     const std::vector<std::string> &after);

// Of these /dev/shm names, the ones that look left behind by this run:
// owned by this user and neither mapped nor open in any process we can
// see. (Other programs on a shared machine create /dev/shm files while
// we run; theirs are still in use or belong to someone else.)
std::vector<std::string> orphaned_dev_shm(const std::vector<std::string> &names);

// Shared memory this process still maps or holds an fd to (memfds and
// /dev/shm files), one entry per object; empty when there is none.
std::vector<std::string> shared_memory_held();

}  // namespace tcheck
