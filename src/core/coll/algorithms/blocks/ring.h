// Ring building blocks over point-to-point messages, on arbitrary
// (uneven) segments of a vector: reduce-scatter leaves segment
// (rank+1) % size fully reduced on each rank; allgather then circulates
// the finished segments. Large segments move in pipelined pieces so a
// piece is reduced while the next one is in flight.
#pragma once

#include <vector>

#include "core/coll/coll_util.h"
#include "core/coll/memory_ops.h"

namespace smd {

class Comm;

// Reduce in place in buf (the whole vector on every rank) over segments.
// Afterwards rank r holds the final value of segment (r+1) % p.
void ring_reduce_scatter(Comm &c, const MemoryOps &m, void *buf, const std::vector<Range> &segs,
                         smd_datatype_t dt, Reduction red, uint64_t seq, uint32_t step_base);

// Starting with rank r holding segment (r + shift) % p of buf, give every
// rank every segment.
void ring_allgather(Comm &c, void *buf, const std::vector<Range> &segs, size_t es, int shift,
                    uint64_t seq, uint32_t step_base);

// Segments of n elements for p ranks.
std::vector<Range> even_segments(size_t n, int p);

}  // namespace smd
