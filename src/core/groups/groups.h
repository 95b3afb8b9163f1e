// A rank's model-parallel groups over a parent communicator: the layout
// every member agreed on, and a communicator for each of this rank's
// groups. Made collectively by create_groups().
#pragma once

#include <smd.h>

#include <array>
#include <memory>
#include <string>

#include "core/groups/layout.h"

namespace smd {

class Comm;

// What one rank asked for, as read from its smd_groups_config_t.
struct GroupsRequest {
  bool readable = true;  // false: the caller's struct could not be read...
  std::string why;       // ... for this reason
  int tp = 1, pp = 1, sdp = 1;
  std::string placement = "cluster";
};

struct RankGroups {
  RankGroups(GroupLayout l, int r) : layout(std::move(l)), rank(r) {}
  GroupLayout layout;
  int rank;  // in the parent communicator
  std::array<std::shared_ptr<Comm>, SMD_GROUP_KIND_COUNT> comms;
};

// Collective over `parent`, to run in the parent's operation order:
// checks that every rank asked for the same layout (else SMD_ERR_MISMATCH
// on every rank, naming who differs), validates it against the parent's
// size (SMD_ERR_INVALID_ARGUMENT on every rank), then splits the parent
// once per group kind (color: the group's index, key: the parent rank).
std::unique_ptr<RankGroups> create_groups(Comm &parent, const GroupsRequest &mine);

}  // namespace smd
