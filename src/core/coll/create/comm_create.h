// Making communicators: the world from rendezvous, and new ones from an
// existing communicator by split, dup or an explicit member list.
#pragma once

#include <smd.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace smd {

struct AlgoConfig;
class Comm;
class Context;
struct WorldConfig;

// Collective over the job: forms the world and its communicator.
std::shared_ptr<Comm> create_world(const smd_init_options_t *options);

// Collective over config.size processes: forms a world from a resolved
// config (create_world's second half; smd_comm_grow's successor worlds).
std::shared_ptr<Comm> form_world(const WorldConfig &config, const AlgoConfig &algos);

// Collective over `parent`; nullptr for ranks passing SMD_UNDEFINED.
std::shared_ptr<Comm> split_comm(Comm &parent, int color, int key);

// Collective over the listed ranks of `parent` only.
std::shared_ptr<Comm> create_group_comm(Comm &parent, const int *ranks, int nranks);

// Collective over `members` (world ranks), which have agreed on `id`
// already (smd_comm_shrink agrees through the store).
std::shared_ptr<Comm> create_comm_with_members(std::shared_ptr<Context> ctx, uint32_t id,
                                               std::vector<int> members, int my_index);

}  // namespace smd
