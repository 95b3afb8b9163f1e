// Made-up communicator shapes and float32 calls for the tests that ask the
// algorithm registry for a choice (test_registry.cc, cost_choices_test.cc).
#pragma once

#include <cstddef>

#include "core/coll/select/registry.h"

namespace smd::shapes {

// `nodes` nodes, the first with max_local ranks and the others min_local;
// node_major false interleaves the nodes' ranks.
inline CommShape node_shape(int nodes, int max_local, int min_local, bool node_major = true) {
  CommShape s;
  s.nodes = nodes;
  s.max_local = max_local;
  s.min_local = min_local;
  s.size = max_local + (nodes - 1) * min_local;
  s.node_major = node_major;
  return s;
}

// A call of `bytes` bytes of float32 (none for a barrier).
inline CollArgs float_call(CollKind kind, size_t bytes) {
  CollArgs a;
  a.kind = kind;
  a.count = kind == CollKind::kBarrier ? 0 : bytes / 4;
  a.datatype = SMD_FLOAT32;
  return a;
}

}  // namespace smd::shapes
