#include "core/coll/select/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "core/comm/arena.h"
#include "core/comm/communicator.h"
#include "core/util/error.h"
#include "core/util/params.h"

namespace smd {

CommShape shape_of(Comm &c) {
  CommShape s;
  s.size = c.size();
  s.nodes = c.placement().node_count;
  s.arena = c.arena() != nullptr;
  s.cma = s.arena && c.arena()->cross_memory();
  const Topology &topo = c.ctx().topology();
  std::vector<int> per_node(size_t(topo.node_count), 0);
  int prev_node = -1;
  std::vector<bool> left(size_t(topo.node_count), false);  // node's run of ranks ended
  for (int w : c.members()) {
    int node = topo.node_of[size_t(w)];
    ++per_node[size_t(node)];
    if (node != prev_node) {
      if (prev_node >= 0) left[size_t(prev_node)] = true;
      if (left[size_t(node)]) s.node_major = false;
      prev_node = node;
    }
  }
  s.max_local = 0;
  s.min_local = s.size;
  for (int k : per_node) {
    if (k == 0) continue;
    if (k > s.max_local) s.max_local = k;
    if (k < s.min_local) s.min_local = k;
  }
  return s;
}

}  // namespace smd
