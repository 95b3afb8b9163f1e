// What the members of a communicator agree on for a group's calls: their
// number, order and arguments, folded into one digest that every call of
// the group carries as its subject (CollArgs::subject), so the checks each
// call already has (fingerprints, arena descriptors, SMD_CHECK=full) cover
// the group at no extra message. A fused allreduce's packed total cannot
// show how the ranks' groups divide it; its subject does. When they
// differ, a cheap exchange through the store names the first differing
// call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/fusion/group_run.h"

namespace smd {

// The subject of one communicator's collectives of a group (never 0).
uint32_t group_subject(const std::vector<GroupCall *> &calls);

// After a call of the group failed on `c` (its `group`-th group there):
// this rank's collectives of the group, published through the store for
// the members that fail with SMD_ERR_MISMATCH to compare with.
void publish_group_calls(Comm &c, const std::vector<GroupCall *> &calls, uint64_t group);

// After a call of the group failed with SMD_ERR_MISMATCH on `c`: publishes
// this rank's list and compares it with those of the members nearest in
// the ring (16 at most), in the order they come. Returns "the groups
// differ at ..." naming the first differing call and both ranks' calls,
// or "" when those lists equal this rank's or did not come within a few
// seconds.
std::string name_group_difference(Comm &c, const std::vector<GroupCall *> &calls, uint64_t group);

}  // namespace smd
