// smd_comm_shrink: the survivors of a communicator agree on who failed and
// form a new communicator of themselves, through the store.
#pragma once

#include <memory>
#include <vector>

namespace smd {

class Comm;

struct Shrunk {
  std::shared_ptr<Comm> comm;
  std::vector<int> old_to_new;  // per old rank: its new rank, -1 if failed
};

// Collective over the survivors of `comm`.
Shrunk shrink_comm(Comm &comm);

}  // namespace smd
