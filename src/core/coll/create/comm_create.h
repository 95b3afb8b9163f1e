// Making communicators: the world from rendezvous, and new ones from an
// existing communicator by split, dup or an explicit member list.
#pragma once

#include <smd.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace smd {

class Comm;
class Context;

// Collective over the job: forms the world and its communicator.
std::shared_ptr<Comm> create_world(const smd_init_options_t *options);

// Collective over `parent`; nullptr for ranks passing SMD_UNDEFINED.
std::shared_ptr<Comm> split_comm(Comm &parent, int color, int key);

// Collective over the listed ranks of `parent` only.
std::shared_ptr<Comm> create_group_comm(Comm &parent, const int *ranks, int nranks);

// Collective over `members` (world ranks), which have agreed on `id`
// already (smd_comm_shrink agrees through the store).
std::shared_ptr<Comm> create_comm_with_members(std::shared_ptr<Context> ctx, uint32_t id,
                                               std::vector<int> members, int my_index);

}  // namespace smd
