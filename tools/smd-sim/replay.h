// Schedule replay: the messages a collective really sent (recorded by the
// inproc transport, SMD_INPROC_TRACE) timed as a discrete-event
// simulation over a modelled network. docs/SCALE.md (Simulator) says what
// is modelled and what is not.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine_adapter.h"

namespace smdsim {

// One step of a rank's program, in its order: a send, or the wait for a
// received message (its sender's send of the same id).
struct TraceOp {
  bool send = false;
  uint64_t id = 0;
  int dst = -1;      // sends
  double bytes = 0;  // sends
};
using RankTrace = std::vector<TraceOp>;

// Where messages go. Ranks are node-major: rank r is on node r /
// ranks_per_node and uses rail (r % ranks_per_node) % rails. Between
// nodes a message takes inter.latency_us plus bytes over one rail's
// bandwidth, in turn with the other messages on its sender's rail out of
// the node and on its receiver's rail into the node; inside a node it
// takes intra's latency plus bytes over intra's bandwidth, in turn with
// its sender's other copies.
struct ReplayNetwork {
  int ranks_per_node = 1;
  int rails = 1;
  LinkParams intra;
  LinkParams inter;  // one rail
};

struct ReplayResult {
  double time_us = 0;  // the last rank's end
  long messages = 0;
  double inter_node_bytes = 0;
};

// Throws std::runtime_error on a trace that cannot finish (a receive of
// a message nobody sent, or a send to a rank out of range).
ReplayResult replay(const std::vector<RankTrace> &ranks, const ReplayNetwork &net);

// The inproc transport's trace file, events with times in (from_ns,
// to_ns) only, per rank in program order; receives of messages sent
// before from_ns left out. Throws on an unreadable file or line.
std::vector<RankTrace> read_trace(const std::string &path, int ranks, int64_t from_ns,
                                  int64_t to_ns);

}  // namespace smdsim
