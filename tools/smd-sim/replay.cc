#include "replay.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <queue>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace smdsim {

namespace {

double transfer_us(const LinkParams &l, double bytes) { return bytes / (l.gbytes_per_s * 1e3); }

}  // namespace

// Every rank runs its ops at its clock; a send costs the sender nothing but
// books the links (messages go out in the order of their issue time,
// since events are taken in time order); a receive moves the clock to the
// message's arrival, or parks the rank until its sender has sent it.
ReplayResult replay(const std::vector<RankTrace> &ranks, const ReplayNetwork &net) {
  const int p = int(ranks.size());
  const int L = std::max(1, net.ranks_per_node);
  const int rails = std::max(1, net.rails);
  const int nodes = (p + L - 1) / L;
  std::vector<double> egress(size_t(nodes * rails), 0), ingress(size_t(nodes * rails), 0);
  std::vector<double> copier(size_t(p), 0);  // a rank's intra-node copies, one at a time
  std::unordered_map<uint64_t, double> arrival;
  std::unordered_map<uint64_t, int> parked;  // message id -> the rank waiting for it
  std::vector<size_t> pc(size_t(p), 0);
  std::vector<double> clock(size_t(p), 0);
  using Event = std::pair<double, int>;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> ready;
  for (int r = 0; r < p; ++r) ready.push({0, r});
  ReplayResult out;
  auto rail_of = [&](int r) { return (r / L) * rails + (r % L) % rails; };
  while (!ready.empty()) {
    auto [t, r] = ready.top();
    ready.pop();
    clock[size_t(r)] = std::max(clock[size_t(r)], t);
    const RankTrace &ops = ranks[size_t(r)];
    while (pc[size_t(r)] < ops.size()) {
      const TraceOp &op = ops[pc[size_t(r)]];
      double now = clock[size_t(r)];
      if (op.send) {
        if (op.dst < 0 || op.dst >= p)
          throw std::runtime_error("trace: rank " + std::to_string(r) + " sends to rank " +
                                   std::to_string(op.dst) + " of " + std::to_string(p));
        double at;
        if (op.dst / L == r / L) {
          double start = std::max(now, copier[size_t(r)]);
          copier[size_t(r)] = start + transfer_us(net.intra, op.bytes);
          at = copier[size_t(r)] + net.intra.latency_us;
        } else {
          double tx = transfer_us(net.inter, op.bytes);
          double &out_free = egress[size_t(rail_of(r))],
                 &in_free = ingress[size_t(rail_of(op.dst))];
          double start = std::max(now, out_free);
          out_free = start + tx;
          double in_start = std::max(start, in_free);
          in_free = in_start + tx;
          at = in_free + net.inter.latency_us;
          out.inter_node_bytes += op.bytes;
        }
        ++out.messages;
        arrival[op.id] = at;
        auto w = parked.find(op.id);
        if (w != parked.end()) {
          ready.push({at, w->second});
          parked.erase(w);
        }
        ++pc[size_t(r)];
      } else {
        auto a = arrival.find(op.id);
        if (a == arrival.end()) {
          parked[op.id] = r;
          break;
        }
        if (a->second > now) {
          ready.push({a->second, r});
          ++pc[size_t(r)];
          break;
        }
        ++pc[size_t(r)];
      }
    }
  }
  for (int r = 0; r < p; ++r) {
    if (pc[size_t(r)] < ranks[size_t(r)].size())
      throw std::runtime_error("trace: rank " + std::to_string(r) +
                               " waits for a message that was never sent");
    out.time_us = std::max(out.time_us, clock[size_t(r)]);
  }
  return out;
}

std::vector<RankTrace> read_trace(const std::string &path, int ranks, int64_t from_ns,
                                  int64_t to_ns) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the trace " + path);
  struct Line {
    int64_t ns;
    int rank;
    TraceOp op;
  };
  std::vector<Line> lines;
  std::string text;
  while (std::getline(in, text)) {
    std::istringstream s(text);
    Line l{};
    char kind = 0;
    if (!(s >> l.ns >> l.rank >> kind >> l.op.id) || l.rank < 0 || l.rank >= ranks)
      throw std::runtime_error("trace " + path + ": bad line '" + text + "'");
    if (kind == 'S') {
      l.op.send = true;
      if (!(s >> l.op.dst >> l.op.bytes))
        throw std::runtime_error("trace " + path + ": bad send '" + text + "'");
    }
    if (l.ns > from_ns && l.ns < to_ns) lines.push_back(l);
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const Line &a, const Line &b) { return a.ns < b.ns; });
  // A receive whose send came before the window (a message of the call
  // before) waits for nothing in it.
  std::unordered_set<uint64_t> sent;
  for (const Line &l : lines)
    if (l.op.send) sent.insert(l.op.id);
  std::vector<RankTrace> out(static_cast<size_t>(ranks));
  for (const Line &l : lines)
    if (l.op.send || sent.count(l.op.id)) out[size_t(l.rank)].push_back(l.op);
  return out;
}

}  // namespace smdsim
