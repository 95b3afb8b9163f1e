#include "core/groups/groups.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/coll/collective.h"
#include "core/coll/create/comm_create.h"
#include "core/comm/communicator.h"
#include "core/util/error.h"
#include "core/util/fnv1a.h"
#include "core/util/log.h"

namespace smd {
namespace {

// One rank's request as the others see it: fixed size, for an allgather.
struct WireRequest {
  int32_t tp, pp, sdp;
  uint32_t unused;
  uint32_t readable;
  uint32_t placement_len;
  uint64_t agreed;     // hash of the placement ranks must agree on
  char placement[32];  // as given (truncated), for messages
};
static_assert(sizeof(WireRequest) % sizeof(uint32_t) == 0);

// "cluster" and "DPT" (or NULL) name one layout and agree; placements
// that are not valid agree only when spelled the same (and then fail
// validation alike on every rank).
WireRequest to_wire(const GroupsRequest &r) {
  WireRequest w{};
  w.readable = r.readable;
  if (!r.readable) return w;
  w.tp = r.tp;
  w.pp = r.pp;
  w.sdp = r.sdp;
  w.placement_len = static_cast<uint32_t>(r.placement.size());
  std::string agreed;
  try {
    agreed = canonical_placement(r.placement.c_str());
  } catch (const Error &) {
    agreed = "invalid:" + r.placement;
  }
  w.agreed = fnv1a64(agreed);
  strncpy(w.placement, r.placement.c_str(), sizeof w.placement - 1);
  return w;
}

bool same_request(const WireRequest &a, const WireRequest &b) {
  if (!a.readable || !b.readable) return a.readable == b.readable;
  return a.tp == b.tp && a.pp == b.pp && a.sdp == b.sdp && a.agreed == b.agreed;
}

std::string describe(const WireRequest &w) {
  if (!w.readable) return "an unusable smd_groups_config_t";
  return format("tp=%d pp=%d sdp=%d placement=\"%s%s\"", w.tp, w.pp, w.sdp, w.placement,
                w.placement_len >= sizeof w.placement ? "..." : "");
}

std::vector<WireRequest> allgather_requests(Comm &parent, const GroupsRequest &mine) {
  WireRequest w = to_wire(mine);
  std::vector<WireRequest> all(static_cast<size_t>(parent.size()));
  CollArgs a;
  a.kind = CollKind::kAllgather;
  a.sendbuf = &w;
  a.recvbuf = all.data();
  a.count = sizeof w / sizeof(uint32_t);
  a.datatype = SMD_UINT32;
  run_collective(parent, a);
  return all;
}

void check_agreement(const std::vector<WireRequest> &all) {
  std::vector<int> differ;
  for (size_t r = 1; r < all.size(); ++r)
    if (!same_request(all[0], all[r])) differ.push_back(static_cast<int>(r));
  if (differ.empty()) return;
  fail(SMD_ERR_MISMATCH,
       "ranks disagree on the groups configuration: rank 0 asked for %s, rank %d for %s%s "
       "(every rank must pass the same tp, pp, sdp and placement)",
       describe(all[0]).c_str(), differ[0], describe(all[differ[0]]).c_str(),
       differ.size() > 1
           ? format(" (and %zu more ranks differ from rank 0)", differ.size() - 1).c_str()
           : "");
}

}  // namespace

std::unique_ptr<RankGroups> create_groups(Comm &parent, const GroupsRequest &mine) {
  std::vector<WireRequest> all = allgather_requests(parent, mine);
  if (!mine.readable) fail(SMD_ERR_INVALID_ARGUMENT, "%s", mine.why.c_str());
  check_agreement(all);
  auto groups = std::make_unique<RankGroups>(
      GroupLayout(parent.size(), mine.tp, mine.pp, mine.placement.c_str(), mine.sdp),
      parent.rank());
  const GroupLayout &l = groups->layout;
  for (int k = 0; k < SMD_GROUP_KIND_COUNT; ++k) {
    auto kind = static_cast<smd_group_kind_t>(k);
    auto comm = split_comm(parent, l.group_index(parent.rank(), kind), parent.rank());
    if (comm->size() != l.group_size(kind) || comm->rank() != l.group_rank(parent.rank(), kind))
      fail(SMD_ERR_INTERNAL,
           "the %s group's communicator has rank %d of %d, the layout says %d of %d",
           group_kind_name(kind), comm->rank(), comm->size(), l.group_rank(parent.rank(), kind),
           l.group_size(kind));
    groups->comms[k] = std::move(comm);
  }
  SMD_INFO("comm", "groups over %s: tp %d, pp %d, rdp %d, sdp %d, placement %s",
           parent.where().c_str(), l.degree(Axis::kTensor), l.degree(Axis::kPipeline),
           l.degree(Axis::kData), l.sdp(), l.placement().c_str());
  return groups;
}

}  // namespace smd
