// Tiny collectives on the arena: a barrier, or a broadcast, allreduce,
// allgather or reduce_scatter whose every member's part (a reduce_scatter's
// whole input) fits the payload of one descriptor line (OpDesc::kInlineBytes). Each member writes
// one line of its own (the call's descriptor, its data, then `ready`) and reads one line per member
// it needs; the descriptors are compared as in every direct algorithm, so
// ranks that disagree still get SMD_ERR_MISMATCH. The direct algorithms
// of these collectives hand such calls here.
#pragma once

#include "core/coll/collective.h"
#include "core/comm/arena.h"
#include "core/util/dtype.h"

namespace smd {

class Comm;

// Whether `a` takes the tiny path on a communicator of `size` members
// (host memory, at most OpDesc::kInlineBytes published per member, one of
// the four collectives).
inline bool tiny_fits(const CollArgs &a, int size) {
  if (a.memory != MemoryKind::kHost) return false;
  size_t blocks = 1;
  if (a.kind == CollKind::kReduceScatter) blocks = static_cast<size_t>(size);
  else if (a.kind != CollKind::kBroadcast && a.kind != CollKind::kAllreduce &&
           a.kind != CollKind::kAllgather)
    return false;
  return a.count <= OpDesc::kInlineBytes && blocks <= OpDesc::kInlineBytes &&
         a.count * datatype_size(a.datatype) * blocks <= OpDesc::kInlineBytes;
}

// Runs a call for which tiny_fits() holds, or a barrier (nothing
// published), on a communicator with an arena.
void run_tiny(Comm &c, const CollArgs &a);

}  // namespace smd
