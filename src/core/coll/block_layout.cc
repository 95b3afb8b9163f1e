#include "core/coll/block_layout.h"

#include <algorithm>

#include "core/util/fnv1a.h"

namespace smd {

void finish_layout(BlockLayout &l) {
  l.total = l.extent = l.largest = 0;
  // FNV-1a over the counts' bytes, folded to 32 bits: it must fit the
  // arena descriptor's spare field.
  Fnv1a64 h;
  for (size_t r = 0; r < l.counts.size(); ++r) {
    l.total += l.counts[r];
    l.largest = std::max(l.largest, l.counts[r]);
    if (l.counts[r]) l.extent = std::max(l.extent, l.displs[r] + l.counts[r]);
    h.mix_u64(l.counts[r]);
  }
  l.digest = h.folded32();
}

}  // namespace smd
