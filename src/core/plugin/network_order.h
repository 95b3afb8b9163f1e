// The order in which SMD_TRANSPORT=auto tries network plugins between
// nodes: every plugin found (search order) that loads and may cross
// nodes, highest probe() priority first. The core knows no plugin by
// name: each plugin says how suitable it is on this machine (efa leads
// where an EFA device is present, ucx drives InfiniBand/RoCE natively,
// tcp is the portable fallback; docs/PLUGINS.md).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/plugin/plugin_loader.h"
#include "core/plugin/transport.h"

namespace smd {

struct NetworkCandidate {
  std::string name;  // as found: libsmd-transport-<name>.so
  std::shared_ptr<LoadedPlugin> plugin;
  ProbeResult probe;
};

struct NetworkOrder {
  std::vector<NetworkCandidate> candidates;  // most preferred first
  std::string rejected;  // "\n  <reason>" per plugin that could not be a candidate
  std::string summary;   // "efa 100 (an EFA device is present), ucx 50 (...)", for the log
};

// Loads and probes every plugin found except those named in `skip`
// ("shm", which auto uses within the node). Logs each one left out.
NetworkOrder network_plugin_order(const TransportPlacement &where,
                                  const std::vector<std::string> &skip);

}  // namespace smd
