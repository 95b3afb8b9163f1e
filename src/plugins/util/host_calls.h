// Talking back to the core, for the in-tree plugins: error text, log lines
// and parameters, all through the callbacks in smd_transport_host_t (a
// plugin never links the core). Each plugin compiles this in and brings
// the names into its own namespace; the templates take any plugin context
// with a `host` member.
#pragma once

#include <cstdarg>

#include "smd_transport.h"

namespace smd_plugin {

// Formats the explanation of a failure and hands it to host->set_error.
void host_set_error(const smd_transport_host_t *host, const char *fmt, va_list args);
// Formats a log line and hands it to host->log.
void host_log(const smd_transport_host_t *host, int level, const char *fmt, va_list args);

// Explains a failure and returns its status: `return fail_host(host, ...)`.
smd_transport_status_t fail_host(const smd_transport_host_t *host, smd_transport_status_t status,
                                 const char *fmt, ...) __attribute__((format(printf, 3, 4)));

// The value of a configuration variable, or NULL when unset.
const char *host_param(const smd_transport_host_t *host, const char *name);

// Checks what init() is handed: a host struct of this ABI, at least as
// large as this plugin's, and a rank inside its world. ERR_INVALID with a
// message naming `plugin` otherwise.
smd_transport_status_t check_host(const smd_transport_host_t *host, const char *plugin);

// Explains a failure of ctx's call and returns its status.
template <class Context>
__attribute__((format(printf, 3, 4))) smd_transport_status_t fail(Context *ctx,
                                                                  smd_transport_status_t status,
                                                                  const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  host_set_error(ctx->host, fmt, args);
  va_end(args);
  return status;
}

// A log line (level: SMD_TRANSPORT_LOG_*) in ctx's host log.
template <class Context>
__attribute__((format(printf, 3, 4))) void log_line(Context *ctx, int level, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  host_log(ctx->host, level, fmt, args);
  va_end(args);
}

// The value of a configuration variable for ctx, or NULL when unset.
template <class Context>
const char *param(Context *ctx, const char *name) {
  return host_param(ctx->host, name);
}

}  // namespace smd_plugin
