#include "core/coll/calibrate/network_probe.h"

#include <algorithm>
#include <map>
#include <vector>

#include "core/comm/communicator.h"
#include "core/comm/tags.h"
#include "core/util/clock.h"
#include "core/util/log.h"

namespace smd {

namespace {

// Rounds of each kind (the first kWarmups not counted) and the large
// message: a few milliseconds at world formation on links of 1 GB/s.
constexpr int kWarmups = 2, kSmallRounds = 15, kLargeRounds = 3;
constexpr size_t kSmallBytes = 8, kLargeBytes = 512 * 1024;
// Tags of the probe's messages among the setup tags (the arena uses
// the first few).
constexpr uint32_t kSmallTag = 1u << 10, kLargeTag = 2u << 10, kReportTag = 3u << 10,
                   kLeaderResultTag = kReportTag + 1, kMemberResultTag = kReportTag + 2;

uint64_t probe_tag(Comm &c, uint32_t low) { return make_tag(TagKind::kSetup, c.id(), low); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Microseconds of `rounds` rounds of sending `bytes` to `next` while as
// many come from `prev`, the median of those after the warm-up.
double ring_rounds(Comm &c, int next, int prev, size_t bytes, int rounds, uint32_t tag_base) {
  std::vector<uint8_t> out(bytes, 0x5a), in(bytes);
  std::vector<double> us;
  for (int i = 0; i < kWarmups + rounds; ++i) {
    uint64_t tag = probe_tag(c, tag_base + static_cast<uint32_t>(i));
    int64_t t0 = now_ns();
    P2PReq reqs[2] = {c.irecv(prev, in.data(), bytes, tag), c.isend(next, out.data(), bytes, tag)};
    c.wait_all(reqs, 2, "network probe");
    if (i >= kWarmups) us.push_back(static_cast<double>(now_ns() - t0) / 1e3);
  }
  return median(us);
}

struct LinkResult {
  double alpha_us = 0;
  double gbps = 0;  // 0: not measured
};

// The leader's own measurement with its ring neighbours.
LinkResult measure_ring(Comm &c, int next, int prev) {
  LinkResult r;
  r.alpha_us = ring_rounds(c, next, prev, kSmallBytes, kSmallRounds, kSmallTag);
  double large_us = ring_rounds(c, next, prev, kLargeBytes, kLargeRounds, kLargeTag);
  // The large rounds' time less one latency is the transfer; at least half
  // the round, so that latencies inflated by a loaded machine cannot
  // leave nothing (or less) for the bytes. 1 byte per us is 1e-3 GB/s.
  double transfer_us = std::max(large_us - r.alpha_us, large_us / 2);
  if (transfer_us > 0) r.gbps = static_cast<double>(kLargeBytes) / transfer_us / 1e3;
  return r;
}

bool plausible(const LinkResult &r) {
  return r.alpha_us > 0.05 && r.alpha_us < 1e5 && r.gbps > 1e-3 && r.gbps < 1e4;
}

}  // namespace

void measure_network(Comm &c) {
  // The members' nodes in order of first appearance; a node's leader is
  // its first member.
  const Topology &topo = c.ctx().topology();
  std::map<int, int> index_of_node;
  std::vector<int> leaders, node_of_member(size_t(c.size()));
  for (int r = 0; r < c.size(); ++r) {
    int node = topo.node_of[size_t(c.world_rank(r))];
    auto it = index_of_node.find(node);
    if (it == index_of_node.end()) {
      it = index_of_node.emplace(node, static_cast<int>(leaders.size())).first;
      leaders.push_back(r);
    }
    node_of_member[size_t(r)] = it->second;
  }
  int nodes = static_cast<int>(leaders.size());
  if (nodes < 2) return;
  int64_t t0 = now_ns();
  int mine = node_of_member[size_t(c.rank())];
  int my_leader = leaders[size_t(mine)];
  LinkResult agreed;
  if (c.rank() == my_leader) {
    LinkResult own = measure_ring(c, leaders[size_t((mine + 1) % nodes)],
                                  leaders[size_t((mine + nodes - 1) % nodes)]);
    if (mine != 0) {
      P2PReq reqs[2] = {
          c.isend(leaders[0], &own, sizeof own, probe_tag(c, kReportTag)),
          c.irecv(leaders[0], &agreed, sizeof agreed, probe_tag(c, kLeaderResultTag))};
      c.wait_all(reqs, 2, "network probe");
    } else {
      // The mean over the leaders whose measurement is plausible.
      std::vector<LinkResult> all(static_cast<size_t>(nodes));
      all[0] = own;
      std::vector<P2PReq> reqs;
      for (int k = 1; k < nodes; ++k)
        reqs.push_back(c.irecv(leaders[size_t(k)], &all[size_t(k)], sizeof(LinkResult),
                               probe_tag(c, kReportTag)));
      c.wait_all(reqs.data(), reqs.size(), "network probe");
      int counted = 0;
      for (const LinkResult &r : all) {
        if (!plausible(r)) continue;
        agreed.alpha_us += r.alpha_us;
        agreed.gbps += r.gbps;
        ++counted;
      }
      if (counted) {
        agreed.alpha_us /= counted;
        agreed.gbps /= counted;
      } else {
        agreed = LinkResult{};
      }
      reqs.clear();
      for (int k = 1; k < nodes; ++k)
        reqs.push_back(
            c.isend(leaders[size_t(k)], &agreed, sizeof agreed, probe_tag(c, kLeaderResultTag)));
      c.wait_all(reqs.data(), reqs.size(), "network probe");
    }
    std::vector<P2PReq> reqs;
    for (int r = 0; r < c.size(); ++r)
      if (r != c.rank() && node_of_member[size_t(r)] == mine)
        reqs.push_back(c.isend(r, &agreed, sizeof agreed, probe_tag(c, kMemberResultTag)));
    c.wait_all(reqs.data(), reqs.size(), "network probe");
  } else {
    P2PReq req = c.irecv(my_leader, &agreed, sizeof agreed, probe_tag(c, kMemberResultTag));
    c.wait(req, "network probe");
  }
  if (agreed.gbps <= 0) {
    SMD_INFO("calibrate", "network between %d nodes: no plausible measurement, defaults kept",
             nodes);
    return;
  }
  c.ctx().set_network_link({agreed.alpha_us, agreed.gbps});
  SMD_INFO("calibrate", "network between %d nodes measured: %.1f us, %.3g GB/s (in %.1f ms)", nodes,
           agreed.alpha_us, agreed.gbps, static_cast<double>(now_ns() - t0) / 1e6);
}

}  // namespace smd
