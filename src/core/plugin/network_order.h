// The order in which SMD_TRANSPORT=auto tries network plugins between
// nodes. efa leads only where it is the right choice: an EFA device is
// present, or SMD_EFA_PROVIDER names a provider (the user asked for
// libfabric). Elsewhere ucx leads: on clusters it drives InfiniBand/RoCE
// natively (rc, dc, ud), and over TCP the two are close (measured on
// loopback, np=2 allreduce: ucx ahead up to 32 KiB, efa's tcp;ofi_rxm
// ahead at 8 MiB; docs/PLUGINS.md).
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
