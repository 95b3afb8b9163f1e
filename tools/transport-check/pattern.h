// Test data that identifies itself: byte i of a message is derived from
// (sender, tag, index, i), so a receiver can tell a wrong, stale,
// reordered or shifted message from the right one.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tcheck {

uint64_t pattern_seed(int sender, uint64_t tag, uint64_t index);

// Fill buf with the pattern bytes [offset, offset + n) of `seed`.
void pattern_fill(void *buf, size_t n, uint64_t seed, size_t offset = 0);

// The first byte of buf that differs from pattern bytes [offset, offset +
// n), or -1 if all match. On a mismatch, *got and *want get the bytes.
long pattern_check(const void *buf, size_t n, uint64_t seed, size_t offset = 0,
                   unsigned *got = nullptr, unsigned *want = nullptr);

}  // namespace tcheck
