// Displacements for the per-rank blocks of the v-collective tests.
#pragma once

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <vector>

namespace mptest {

// The blocks packed in rank order (what NULL displs mean).
inline std::vector<size_t> packed_displs(const std::vector<size_t> &counts) {
  std::vector<size_t> d(counts.size());
  std::exclusive_scan(counts.begin(), counts.end(), d.begin(), size_t(0));
  return d;
}

// The blocks in reverse rank order, 3 elements in and 5 apart: gaps that
// a collective must leave alone.
inline std::vector<size_t> gapped_displs(const std::vector<size_t> &counts) {
  std::vector<size_t> d(counts.size());
  size_t at = 3;
  for (size_t i = counts.size(); i-- > 0;) {
    d[i] = at;
    at += counts[i] + 5;
  }
  return d;
}

// Elements from the buffer's start to the end of its last block.
inline size_t extent_of(const std::vector<size_t> &counts, const std::vector<size_t> &displs) {
  size_t e = 0;
  for (size_t i = 0; i < counts.size(); ++i) e = std::max(e, displs[i] + counts[i]);
  return e;
}

}  // namespace mptest
