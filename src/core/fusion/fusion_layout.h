// Where the tensors of a fused allreduce lie in its buffer, and how much
// of that buffer each rank reduces: the balanced fusion buffer. A pure
// function of the tensor sizes and the communicator's shape, so that every
// rank lays out the same buffer and a unit test can check the balance.
#pragma once

#include <cstddef>
#include <vector>

namespace smd {

struct FusionLayout {
  std::vector<size_t> offsets;  // element offset of each tensor
  size_t used = 0;              // elements the tensors fill
  size_t padded = 0;            // elements the fused allreduce runs on
};

// Tensors of `counts` elements back to back, the total padded to a whole
// number of cache lines for every one of `ranks` members. The engine
// splits a reduction at cache lines (flat arena: one slice per member;
// hierarchy: one slice per local rank, then one segment per node on each
// rail), so with this padding every member reduces the same share and no
// ragged end is left over for one rank (the hierarchy's leaders) to do.
FusionLayout lay_out_fusion(const std::vector<size_t> &counts, size_t elem_size, int ranks);

// The elements each rank reduces of an allreduce of n elements, as the
// engine splits it: over `ranks` members of one node (the arena's
// cache-line split), or over nodes x local members (rank = node * local +
// local_rank: a slice per local rank, the rest of a ragged end on the
// node leaders, then each slice in one segment per node along its rail).
std::vector<size_t> flat_shares(size_t n, int ranks, size_t elem_size);
std::vector<size_t> hier_shares(size_t n, int nodes, int local, size_t elem_size);

}  // namespace smd
