#include "core/coll/create/comm_create.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "core/coll/calibrate/calibration.h"
#include "core/coll/calibrate/network_probe.h"
#include "core/coll/coll_state.h"
#include "core/coll/calibrate/staging_probe.h"
#include "core/coll/collective.h"
#include "core/coll/agree/settings_agreement.h"
#include "core/comm/communicator.h"
#include "core/util/error.h"
#include "core/util/log.h"
#include "core/util/params.h"

namespace smd {

namespace {

// A communicator id every member can use: larger than any id any member
// has used, so tags of two communicators sharing a rank never collide.
uint32_t agree_id(const std::vector<uint32_t> &proposals) {
  return *std::max_element(proposals.begin(), proposals.end());
}

std::shared_ptr<Comm> finish(std::shared_ptr<Context> ctx, uint32_t id, std::vector<int> members,
                             int my_index) {
  ctx->accept_comm_id(id);
  auto comm = std::make_shared<Comm>(std::move(ctx), id, std::move(members), my_index);
  comm->setup();
  // A node's ranks measure (or recall) the machine once and share the
  // values through the arena; the communicator's cost model uses them.
  if (comm->arena()) {
    auto st = std::make_shared<CollState>();
    st->calibration = calibrate_node(*comm);
    comm->set_coll_state(st);
    // The staging probe times the communicator's own collectives, so it
    // runs once the communicator can run them.
    if (staging_probe_due(*comm, *st->calibration)) {
      probe_staging(*comm, *st->calibration);
      remember_calibration(*comm, *st->calibration);
    }
  }
  SMD_INFO("comm", "created %s: %d node(s), %s", comm->where().c_str(),
           comm->placement().node_count,
           comm->arena() ? "shared-memory arena" : "point-to-point algorithms");
  return comm;
}

uint32_t hash_ranks(const int *ranks, int n) {
  uint32_t h = 2166136261u;
  for (int i = 0; i < n; ++i) {
    h ^= static_cast<uint32_t>(ranks[i]);
    h *= 16777619u;
  }
  return h;
}

}  // namespace

std::shared_ptr<Comm> create_world(const smd_init_options_t *options) {
  // A misspelt SMD_ALGO fails init before any rank waits for another.
  AlgoConfig algos = AlgoConfig::parse(param_string("SMD_ALGO"));
  return form_world(resolve_world_config(options), algos);
}

std::shared_ptr<Comm> form_world(const WorldConfig &config, const AlgoConfig &algos) {
  std::shared_ptr<Context> ctx = Context::create(config);
  std::vector<int> members(ctx->size());
  std::iota(members.begin(), members.end(), 0);
  auto world = finish(ctx, 1, std::move(members), ctx->rank());
  // Before the world's first collective, whose cost model uses it; on
  // every rank whatever SMD_CALIBRATE says (agreed just below), so that
  // ranks that differ there fail with a mismatch rather than hang.
  measure_network(*world);
  check_settings_agree(*world);
  // Everyone connected and set up before anyone returns.
  CollArgs barrier;
  barrier.kind = CollKind::kBarrier;
  run_collective(*world, barrier);
  SMD_INFO("init", "world ready: %d ranks, algorithms %s", ctx->size(), algos.describe().c_str());
  return world;
}

std::shared_ptr<Comm> split_comm(Comm &parent, int color, int key) {
  int p = parent.size();
  struct Entry {
    int32_t color, key;
    uint32_t proposal, pad;
  };
  Entry mine{color < 0 ? -1 : color, key, parent.ctx().propose_comm_id(), 0};
  std::vector<Entry> all(p);
  CollArgs a;
  a.kind = CollKind::kAllgather;
  a.sendbuf = &mine;
  a.recvbuf = all.data();
  a.count = sizeof(Entry) / sizeof(uint32_t);
  a.datatype = SMD_UINT32;
  run_collective(parent, a);
  std::vector<uint32_t> proposals;
  for (auto &e : all) proposals.push_back(e.proposal);
  uint32_t id = agree_id(proposals);
  parent.ctx().accept_comm_id(id);  // also on ranks that join no new communicator
  if (color < 0) return nullptr;
  std::vector<int> order;
  for (int r = 0; r < p; ++r)
    if (all[r].color == color) order.push_back(r);
  std::stable_sort(order.begin(), order.end(),
                   [&](int x, int y) { return all[x].key < all[y].key; });
  std::vector<int> members;
  int my_index = 0;
  for (int r : order) {
    if (r == parent.rank()) my_index = static_cast<int>(members.size());
    members.push_back(parent.world_rank(r));
  }
  return finish(parent.ctx_ptr(), id, std::move(members), my_index);
}

std::shared_ptr<Comm> create_comm_with_members(std::shared_ptr<Context> ctx, uint32_t id,
                                               std::vector<int> members, int my_index) {
  return finish(std::move(ctx), id, std::move(members), my_index);
}

std::shared_ptr<Comm> create_group_comm(Comm &parent, const int *ranks, int n) {
  std::vector<int> members;
  int my_index = -1;
  for (int i = 0; i < n; ++i) {
    if (ranks[i] == parent.rank()) my_index = i;
    members.push_back(parent.world_rank(ranks[i]));
  }
  // Agree on an id among the members only, on tags no collective uses.
  Comm forming(parent.ctx_ptr(), 0, members, my_index);
  uint32_t proposal = parent.ctx().propose_comm_id();
  Bytes b(sizeof proposal);
  memcpy(b.data(), &proposal, sizeof proposal);
  std::vector<Bytes> got =
      forming.exchange(b, TagKind::kGroup, parent.id(), hash_ranks(ranks, n) & ((1u << 21) - 1));
  std::vector<uint32_t> proposals;
  for (auto &g : got) {
    uint32_t v = 0;
    if (g.size() != sizeof v) fail(SMD_ERR_TRANSPORT, "malformed group-formation message");
    memcpy(&v, g.data(), sizeof v);
    proposals.push_back(v);
  }
  return finish(parent.ctx_ptr(), agree_id(proposals), std::move(members), my_index);
}

}  // namespace smd
