#include "core/fusion/fusion_layout.h"

#include "core/coll/coll_util.h"
#include "core/coll/create/hierarchy.h"
#include "core/coll/algorithms/blocks/ring.h"

namespace smd {

FusionLayout lay_out_fusion(const std::vector<size_t> &counts, size_t elem_size, int ranks) {
  FusionLayout l;
  l.offsets.reserve(counts.size());
  for (size_t n : counts) {
    l.offsets.push_back(l.used);
    l.used += n;
  }
  size_t unit = static_cast<size_t>(ranks < 1 ? 1 : ranks) * line_elems(elem_size);
  l.padded = (l.used + unit - 1) / unit * unit;
  return l;
}

std::vector<size_t> flat_shares(size_t n, int ranks, size_t elem_size) {
  std::vector<size_t> s;
  for (int r = 0; r < ranks; ++r)
    s.push_back(split_aligned(n, ranks, r, line_elems(elem_size)).len);
  return s;
}

std::vector<size_t> hier_shares(size_t n, int nodes, int local, size_t elem_size) {
  size_t unit = hier_split_unit(local, elem_size);
  size_t whole = n / unit * unit, q = whole / static_cast<size_t>(local);
  std::vector<Range> segs = even_segments(q, nodes);
  std::vector<size_t> s;
  for (int k = 0; k < nodes; ++k)
    for (int l = 0; l < local; ++l) s.push_back(segs[size_t(k)].len + (l == 0 ? n - whole : 0));
  return s;
}

}  // namespace smd
