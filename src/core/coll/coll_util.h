// Small pieces every algorithm uses: element ranges, byte offsets, the
// reduction operation split into SUM + divisor for SMD_AVG.
#pragma once

#include <smd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/coll/collective.h"
#include "core/util/dtype.h"

namespace smd {

// [off, off+len) in elements.
struct Range {
  size_t off = 0;
  size_t len = 0;
};

// `n` elements moved at most `per_round` at a time: how many rounds (at
// least one, for an empty call too) and round k's elements (empty past the
// end).
struct RoundSlices {
  size_t n, per_round;
  uint64_t count() const { return std::max<uint64_t>(1, (n + per_round - 1) / per_round); }
  Range operator[](uint64_t k) const {
    size_t off = k * per_round;
    return Range{std::min(off, n), off < n ? std::min(per_round, n - off) : 0};
  }
};

// The rounds of an operation on p blocks of n elements (alltoall,
// reduce_scatter) that stages the same slice of every block each round,
// at most `chunk` bytes in all.
inline RoundSlices block_round_slices(size_t chunk, int p, size_t n, size_t es) {
  return RoundSlices{n, std::max<size_t>(1, chunk / (static_cast<size_t>(p) * es))};
}

// Part i of n elements split into p near-equal contiguous parts.
inline Range split(size_t n, int p, int i) {
  size_t base = n / p, extra = n % p;
  size_t ui = static_cast<size_t>(i);
  Range r;
  r.off = ui * base + (ui < extra ? ui : extra);
  r.len = base + (ui < extra ? 1 : 0);
  return r;
}

// Elements per cache line: slices of a round are split at multiples of it,
// so that no two members write the same line.
inline size_t line_elems(size_t es) { return es < 64 ? 64 / es : 1; }

// Like split(), but part boundaries fall on multiples of `align` elements
// (cache lines), except for the end.
inline Range split_aligned(size_t n, int p, int i, size_t align) {
  if (align <= 1) return split(n, p, i);
  size_t blocks = (n + align - 1) / align;
  Range b = split(blocks, p, i);
  Range r;
  r.off = b.off * align;
  size_t end = (b.off + b.len) * align;
  if (r.off > n) r.off = n;
  if (end > n) end = n;
  r.len = end - r.off;
  return r;
}

inline uint8_t *at(void *base, size_t elems, size_t es) {
  return static_cast<uint8_t *>(base) + elems * es;
}
inline const uint8_t *at(const void *base, size_t elems, size_t es) {
  return static_cast<const uint8_t *>(base) + elems * es;
}

inline void copy_bytes(void *dst, const void *src, size_t bytes) {
  if (bytes && dst != src) memmove(dst, src, bytes);
}

// The operation applied while combining (AVG combines as SUM) and the
// divisor applied once at the end (0 = none).
struct Reduction {
  smd_op_t op;
  int divisor;
};
inline Reduction reduction_of(smd_op_t op, int nranks) {
  if (op == SMD_AVG) return {SMD_SUM, nranks > 1 ? nranks : 0};
  return {op, 0};
}

}  // namespace smd
