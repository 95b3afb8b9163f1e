// The order in which SMD_TRANSPORT=auto tries network plugins between
// nodes. efa leads only where it is the right choice: an EFA device is
// present, or SMD_EFA_PROVIDER names a provider (the user asked for
// libfabric). Elsewhere libfabric would run over its tcp provider, which
// UCX beats and which UCX's verbs transports beat by far, so ucx leads.
#pragma once

#include <string>
#include <vector>

namespace smd {

struct NetworkOrder {
  std::vector<std::string> names;  // preferred plugins, most preferred first
  std::string why;                 // one phrase for the init log
};

NetworkOrder network_plugin_order();

// True when /sys/class/infiniband lists a device bound to the efa driver.
bool efa_device_present();

}  // namespace smd
