// Going on after a lost rank: revoke, agree, shrink, grow, join (docs/ELASTIC.md).
#include <smd.h>

#include <algorithm>

#include "core/api/guard.h"
#include "core/api/handles.h"
#include "core/api/validate.h"
#include "core/comm/communicator.h"
#include "core/elastic/grow.h"
#include "core/elastic/shrink.h"
#include "core/elastic/survivor_agreement.h"
#include "core/util/error.h"

using namespace smd;

extern "C" {

SMD_API smd_result_t smd_comm_revoke(smd_comm_t *comm) {
  return guarded("smd_comm_revoke", [&] {
    auto c = comm_of(comm);
    // The store first: a peer woken by the local mark below asks it
    // whether this is a revoke or an abort.
    c->ctx().announce_revoke(c->abort_key());
    c->revoke_local();
  });
}

SMD_API smd_result_t smd_comm_agree(smd_comm_t *comm, uint32_t *flag, int *failed,
                                    int failed_capacity, int *nfailed) {
  return guarded("smd_comm_agree", [&] {
    require_out(flag, "flag");
    require_out(nfailed, "nfailed");
    if (failed_capacity < 0)
      fail(SMD_ERR_INVALID_ARGUMENT, "failed_capacity %d is negative", failed_capacity);
    if (failed_capacity > 0 && !failed)
      fail(SMD_ERR_INVALID_ARGUMENT, "failed is NULL but failed_capacity is %d", failed_capacity);
    auto c = comm_of(comm);
    SurvivorAgreement a = agree_among_survivors(*c, *flag, 0);
    *flag = a.flag;
    *nfailed = static_cast<int>(a.failed.size());
    std::copy_n(a.failed.begin(), std::min<size_t>(a.failed.size(), size_t(failed_capacity)),
                failed);
  });
}

SMD_API smd_result_t smd_comm_shrink(smd_comm_t *comm, smd_comm_t **newcomm, int *old_to_new) {
  return guarded("smd_comm_shrink", [&] {
    require_out(newcomm, "newcomm");
    *newcomm = nullptr;
    auto c = comm_of(comm);
    Shrunk s = shrink_comm(*c);
    if (old_to_new) std::copy(s.old_to_new.begin(), s.old_to_new.end(), old_to_new);
    *newcomm = new_comm_handle(std::move(s.comm));
  });
}

SMD_API smd_result_t smd_comm_grow(smd_comm_t *comm, int n_new, int64_t wait_ms,
                                   smd_comm_t **newcomm) {
  return guarded("smd_comm_grow", [&] {
    require_out(newcomm, "newcomm");
    *newcomm = nullptr;
    auto c = comm_of(comm);
    *newcomm = new_comm_handle(grow_comm(*c, n_new, wait_ms));
  });
}

SMD_API smd_result_t smd_comm_join(const smd_init_options_t *options, smd_comm_t **newcomm) {
  return guarded("smd_comm_join", [&] {
    require_out(newcomm, "newcomm");
    *newcomm = nullptr;
    *newcomm = new_comm_handle(join_grown_comm(options));
  });
}

}  // extern "C"
