// No C++ exception may cross the plugin ABI: each exported entry runs its
// body inside guard(), which turns an escaping exception into a status
// and a message naming the plugin and the call.
#pragma once

#include <exception>
#include <new>

#include "host_calls.h"

namespace smd_plugin {

template <class Body>
smd_transport_status_t guard(const smd_transport_host_t *host, const char *plugin, const char *call,
                             Body body) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return fail_host(host, SMD_TRANSPORT_ERR_NO_MEMORY, "%s: %s: out of memory", plugin, call);
  } catch (const std::exception &e) {
    return fail_host(host, SMD_TRANSPORT_ERR_OTHER, "%s: %s: %s", plugin, call, e.what());
  } catch (...) {
    return fail_host(host, SMD_TRANSPORT_ERR_OTHER, "%s: %s: unknown exception", plugin, call);
  }
}

}  // namespace smd_plugin
