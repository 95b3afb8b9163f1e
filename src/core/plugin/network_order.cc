#include "core/plugin/network_order.h"

#include <algorithm>

#include "core/util/error.h"
#include "core/util/log.h"

namespace smd {

NetworkOrder network_plugin_order(const TransportPlacement &where,
                                  const std::vector<std::string> &skip) {
  NetworkOrder order;
  auto reject = [&](const std::string &name, const std::string &why) {
    order.rejected += "\n  " + why;
    SMD_INFO("init", "auto transport: %s unusable, trying the next: %s", name.c_str(), why.c_str());
  };
  for (const std::string &name : discover_plugins()) {
    if (std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
    std::shared_ptr<LoadedPlugin> plugin;
    try {
      plugin = load_plugin(name);
    } catch (const Error &e) {
      reject(name, e.message());
      continue;
    }
    if (plugin->table->caps & SMD_TRANSPORT_CAP_INTRA_NODE_ONLY) {
      reject(name, "plugin " + plugin->path + " reaches only ranks of one node");
      continue;
    }
    ProbeResult probe = probe_plugin(*plugin, where);
    if (probe.priority < 0) {
      reject(name, format("plugin %s: not usable on this machine: %s", plugin->path.c_str(),
                          probe.why.c_str()));
      continue;
    }
    order.candidates.push_back({name, std::move(plugin), std::move(probe)});
  }
  std::stable_sort(order.candidates.begin(), order.candidates.end(),
                   [](const NetworkCandidate &a, const NetworkCandidate &b) {
                     return a.probe.priority > b.probe.priority;
                   });
  for (const NetworkCandidate &c : order.candidates)
    order.summary += format("%s%s %d (%s)", order.summary.empty() ? "" : ", ", c.name.c_str(),
                            c.probe.priority, c.probe.why.c_str());
  return order;
}

}  // namespace smd
