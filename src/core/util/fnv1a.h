// FNV-1a (Fowler, Noll, Vo), the one hash behind every digest ranks compare
// and every name derived from shared text: unlike std::hash it is the same
// on every rank, build and platform. Header-only and standard-library-only,
// so that the torch binding (which sits on smd.h) uses this copy too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace smd {

// 64-bit FNV-1a, fed piece by piece.
class Fnv1a64 {
 public:
  static constexpr uint64_t kOffsetBasis = 14695981039346656037ull;
  static constexpr uint64_t kPrime = 1099511628211ull;

  constexpr Fnv1a64 &mix_byte(uint8_t b) {
    h_ = (h_ ^ b) * kPrime;
    return *this;
  }
  Fnv1a64 &mix_bytes(const void *p, size_t n) {
    const unsigned char *c = static_cast<const unsigned char *>(p);
    for (size_t i = 0; i < n; ++i) mix_byte(c[i]);
    return *this;
  }
  constexpr Fnv1a64 &mix_text(std::string_view s) {
    for (char c : s) mix_byte(static_cast<uint8_t>(c));
    return *this;
  }
  // v's eight bytes, least significant first: the same digest whatever the
  // host's byte order.
  constexpr Fnv1a64 &mix_u64(uint64_t v) {
    for (int i = 0; i < 8; ++i, v >>= 8) mix_byte(static_cast<uint8_t>(v & 0xff));
    return *this;
  }

  constexpr uint64_t value() const { return h_; }
  // The two halves xor-ed, for a 32-bit field.
  constexpr uint32_t folded32() const { return static_cast<uint32_t>(h_ ^ (h_ >> 32)); }

 private:
  uint64_t h_ = kOffsetBasis;
};

constexpr uint64_t fnv1a64(std::string_view s) { return Fnv1a64().mix_text(s).value(); }

// 32-bit FNV-1a: its own basis and prime (not the 64-bit hash folded).
constexpr uint32_t fnv1a32(std::string_view s) {
  uint32_t h = 2166136261u;
  for (char c : s) h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
  return h;
}

}  // namespace smd
