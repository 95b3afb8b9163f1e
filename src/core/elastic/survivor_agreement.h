// Agreement among the survivors of a communicator (smd_comm_agree), through
// the world's store only: it works on a communicator whose traffic has
// failed, and members may fail while it runs. docs/ELASTIC.md has the
// protocol and why it cannot disagree.
#pragma once

#include <cstdint>
#include <vector>

namespace smd {

class Comm;

struct SurvivorAgreement {
  uint32_t flag = ~0u;         // AND of the survivors' flags
  std::vector<int> failed;     // communicator ranks, ascending
  std::vector<int> survivors;  // the others, ascending
  uint32_t max_proposal = 0;   // the largest communicator-id proposal among survivors
};

// Collective over the survivors of `comm` (each calls it the same number of
// times). `proposal` rides along for smd_comm_shrink (a communicator id).
// Throws SMD_ERR_PEER_FAILURE when this rank was declared failed or the
// store is lost, SMD_ERR_TIMEOUT when a member's vote stays half-written.
SurvivorAgreement agree_among_survivors(Comm &comm, uint32_t flag, uint32_t proposal);

}  // namespace smd
