#include "core/elastic/shrink.h"

#include "core/coll/create/comm_create.h"
#include "core/comm/communicator.h"
#include "core/elastic/survivor_agreement.h"
#include "core/util/error.h"
#include "core/util/log.h"

namespace smd {

Shrunk shrink_comm(Comm &comm) {
  // The id rides in the votes: the survivors take the largest proposal, so
  // the new communicator's tags collide with no communicator any of them
  // has used (as split and create_group agree on ids).
  SurvivorAgreement a = agree_among_survivors(comm, 1, comm.ctx().propose_comm_id());
  Shrunk out;
  out.old_to_new.assign(size_t(comm.size()), -1);
  std::vector<int> members;
  int my_index = -1;
  for (int r : a.survivors) {
    out.old_to_new[size_t(r)] = static_cast<int>(members.size());
    if (r == comm.rank()) my_index = static_cast<int>(members.size());
    members.push_back(comm.world_rank(r));
  }
  if (my_index < 0) fail(SMD_ERR_INTERNAL, "shrink of %s: this rank is not a survivor", comm.where().c_str());
  SMD_INFO("elastic", "shrinking %s: %zu failed, %zu survive", comm.where().c_str(), a.failed.size(),
           members.size());
  out.comm = create_comm_with_members(comm.ctx_ptr(), a.max_proposal, std::move(members), my_index);
  return out;
}

}  // namespace smd
