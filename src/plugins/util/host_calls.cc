#include "host_calls.h"

#include <cstdio>

namespace smd_plugin {

// Longer texts are cut: the core copies them into its own error record.
constexpr size_t kTextBytes = 1024;

void host_set_error(const smd_transport_host_t *host, const char *fmt, va_list args) {
  if (host == nullptr || host->set_error == nullptr) return;
  char text[kTextBytes];
  vsnprintf(text, sizeof text, fmt, args);
  host->set_error(host->host, text);
}

void host_log(const smd_transport_host_t *host, int level, const char *fmt, va_list args) {
  if (host == nullptr || host->log == nullptr) return;
  char text[kTextBytes];
  vsnprintf(text, sizeof text, fmt, args);
  host->log(host->host, level, text);
}

smd_transport_status_t fail_host(const smd_transport_host_t *host, smd_transport_status_t status,
                                 const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  host_set_error(host, fmt, args);
  va_end(args);
  return status;
}

const char *host_param(const smd_transport_host_t *host, const char *name) {
  if (host == nullptr || host->get_param == nullptr) return nullptr;
  return host->get_param(host->host, name);
}

smd_transport_status_t check_host(const smd_transport_host_t *host, const char *plugin) {
  if (host == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  if (host->struct_size < sizeof(smd_transport_host_t) ||
      host->abi_version != SMD_TRANSPORT_ABI_VERSION)
    return fail_host(host, SMD_TRANSPORT_ERR_INVALID,
                     "%s: host struct of %zu bytes, ABI %u; expected %zu "
                     "bytes, ABI %u",
                     plugin, host->struct_size, host->abi_version, sizeof(smd_transport_host_t),
                     SMD_TRANSPORT_ABI_VERSION);
  if (host->world_size < 1 || host->rank < 0 || host->rank >= host->world_size)
    return fail_host(host, SMD_TRANSPORT_ERR_INVALID, "%s: rank %d of a world of %d", plugin,
                     host->rank, host->world_size);
  return SMD_TRANSPORT_OK;
}

}  // namespace smd_plugin
