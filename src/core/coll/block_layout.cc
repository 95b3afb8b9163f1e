#include "core/coll/block_layout.h"

#include <algorithm>

namespace smd {

void finish_layout(BlockLayout &l) {
  l.total = l.extent = l.largest = 0;
  // FNV-1a over the counts' bytes, folded to 32 bits: it must fit the
  // arena descriptor's spare field.
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t r = 0; r < l.counts.size(); ++r) {
    l.total += l.counts[r];
    l.largest = std::max(l.largest, l.counts[r]);
    if (l.counts[r]) l.extent = std::max(l.extent, l.displs[r] + l.counts[r]);
    uint64_t c = l.counts[r];
    for (int b = 0; b < 8; ++b, c >>= 8) h = (h ^ (c & 0xff)) * 0x100000001b3ull;
  }
  l.digest = static_cast<uint32_t>(h ^ (h >> 32));
}

}  // namespace smd
