#include "core/elastic/shrink.h"

#include <string>

#include "core/coll/collective.h"
#include "core/coll/create/comm_create.h"
#include "core/comm/communicator.h"
#include "core/elastic/survivor_agreement.h"
#include "core/util/error.h"
#include "core/util/log.h"

namespace smd {

namespace {

// Forms the communicator of the agreement's survivors and runs a barrier
// on it: a member that voted and died since shows up here (on some
// survivors: over tcp the setup needs no traffic with every member, and a
// barrier can end on one rank and fail on another). Empty on failure,
// with the reason in `why`.
std::shared_ptr<Comm> form_and_check(Comm &comm, const SurvivorAgreement &a, std::string &why) {
  std::vector<int> members;
  int my_index = -1;
  for (int r : a.survivors) {
    if (r == comm.rank()) my_index = static_cast<int>(members.size());
    members.push_back(comm.world_rank(r));
  }
  if (my_index < 0)
    fail(SMD_ERR_INTERNAL, "shrink of %s: this rank is not a survivor", comm.where().c_str());
  try {
    auto formed =
        create_comm_with_members(comm.ctx_ptr(), a.max_proposal, std::move(members), my_index);
    CollArgs barrier;
    barrier.kind = CollKind::kBarrier;
    run_collective(*formed, barrier);
    return formed;
  } catch (const Error &e) {
    // Whatever the cause, this survivor votes no in the check rather than
    // leave the others waiting for its vote until SMD_TIMEOUT.
    why = e.what();
    return nullptr;
  }
}

}  // namespace

Shrunk shrink_comm(Comm &comm) {
  // Each round: one agreement on the survivors (their votes carry the id:
  // the largest proposal, as split and create_group agree on ids, so the
  // new communicator's tags collide with no communicator any of them has
  // used), the new communicator and a barrier on it, then a second
  // agreement on whether every survivor's barrier passed. The second one
  // cannot disagree, so every survivor keeps the communicator or every
  // survivor drops it and goes round again, when the next agreement
  // declares the member that died (docs/ELASTIC.md).
  std::string why;
  for (int round = 0; round < comm.size(); ++round) {
    SurvivorAgreement a = agree_among_survivors(comm, 1, comm.ctx().propose_comm_id());
    SMD_INFO("elastic", "shrinking %s: %zu failed, %zu survive", comm.where().c_str(),
             a.failed.size(), a.survivors.size());
    std::shared_ptr<Comm> formed = form_and_check(comm, a, why);
    SurvivorAgreement check = agree_among_survivors(comm, formed ? 1 : 0, 0);
    if (check.flag && check.failed == a.failed) {
      Shrunk out;
      out.old_to_new.assign(size_t(comm.size()), -1);
      for (size_t i = 0; i < a.survivors.size(); ++i)
        out.old_to_new[size_t(a.survivors[i])] = int(i);
      out.comm = std::move(formed);
      return out;
    }
    if (why.empty()) why = "a member failed after the agreement";
    SMD_INFO("elastic", "shrink of %s: a new member failed (%s); agreeing again",
             comm.where().c_str(), why.c_str());
  }
  fail(SMD_ERR_PEER_FAILURE,
       "shrink of %s: the new communicator failed to form %d times (last: %s)",
       comm.where().c_str(), comm.size(), why.c_str());
}

}  // namespace smd
