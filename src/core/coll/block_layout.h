// The per-rank blocks of a v-collective (allgatherv, reduce_scatterv):
// rank r's block is counts[r] elements at displs[r] of the buffer that
// holds them all. Made once by the entry point (which validates it) and
// shared by the copies of the call's arguments, so the caller's arrays
// may go away as soon as a nonblocking call returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace smd {

struct BlockLayout {
  std::vector<size_t> counts, displs;
  size_t total = 0;   // sum of counts
  size_t extent = 0;  // elements from the buffer's start to the end of its last block
  size_t largest = 0;
  // A digest of counts, which every member must agree on (displs are each
  // rank's own): compared in the arena's descriptors and the agreement check.
  uint32_t digest = 0;
};

// Fills total, extent, largest and digest from counts and displs.
void finish_layout(BlockLayout &l);

}  // namespace smd
