// Growing a communicator: new processes join a successor of an existing
// communicator through the world's store (docs/ELASTIC.md, Grow).
#pragma once

#include <smd.h>

#include <cstdint>
#include <memory>

namespace smd {

class Comm;

// Collective over every member of `comm`: admits n_new joiners (waiting
// up to wait_ms for them; <= 0: SMD_TIMEOUT) and forms the successor
// world, members first in their order, joiners after.
std::shared_ptr<Comm> grow_comm(Comm &comm, int n_new, int64_t wait_ms);

// A new process: waits for a grow that admits it and forms the successor
// world with its members.
std::shared_ptr<Comm> join_grown_comm(const smd_init_options_t *options);

}  // namespace smd
