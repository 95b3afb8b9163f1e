#include "pattern.h"

#include <cstring>

namespace tcheck {

static inline uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t pattern_seed(int sender, uint64_t tag, uint64_t index) {
  return mix(mix(uint64_t(sender) + 1) ^ mix(tag) * 3 ^ mix(index) * 5);
}

static inline uint64_t word(uint64_t seed, size_t w) { return mix(seed + w); }

static inline unsigned char byte_at(uint64_t seed, size_t pos) {
  return (unsigned char)(word(seed, pos / 8) >> (8 * (pos % 8)));
}

void pattern_fill(void *buf, size_t n, uint64_t seed, size_t offset) {
  auto *p = static_cast<unsigned char *>(buf);
  size_t i = 0;
  for (; i < n && (offset + i) % 8 != 0; ++i) p[i] = byte_at(seed, offset + i);
  for (; i + 8 <= n; i += 8) {
    uint64_t w = word(seed, (offset + i) / 8);
    memcpy(p + i, &w, 8);
  }
  for (; i < n; ++i) p[i] = byte_at(seed, offset + i);
}

long pattern_check(const void *buf, size_t n, uint64_t seed, size_t offset, unsigned *got,
                   unsigned *want) {
  auto *p = static_cast<const unsigned char *>(buf);
  size_t i = 0;
  for (; i < n && (offset + i) % 8 != 0; ++i)
    if (p[i] != byte_at(seed, offset + i)) break;
  if (i == n || (offset + i) % 8 == 0) {
    for (; i + 8 <= n; i += 8) {
      uint64_t w = word(seed, (offset + i) / 8), have;
      memcpy(&have, p + i, 8);
      if (have != w) break;
    }
  }
  for (; i < n; ++i)
    if (p[i] != byte_at(seed, offset + i)) {
      if (got != nullptr) *got = p[i];
      if (want != nullptr) *want = byte_at(seed, offset + i);
      return long(i);
    }
  return -1;
}

}  // namespace tcheck
