// Talking back to the core: error text, log lines and parameters, all
// through the callbacks in smd_transport_host_t.
#include <cstdarg>
#include <cstdio>

#include "context.h"

namespace smd_shm {

static void vset_error(const smd_transport_host_t *host, const char *fmt,
                       va_list args) {
  if (host == nullptr || host->set_error == nullptr) return;
  char text[512];
  vsnprintf(text, sizeof text, fmt, args);
  host->set_error(host->host, text);
}

Status fail(Context *ctx, Status status, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vset_error(ctx->host, fmt, args);
  va_end(args);
  return status;
}

Status fail_host(const smd_transport_host_t *host, Status status,
                 const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vset_error(host, fmt, args);
  va_end(args);
  return status;
}

void log_line(Context *ctx, int level, const char *fmt, ...) {
  if (ctx->host == nullptr || ctx->host->log == nullptr) return;
  char text[512];
  va_list args;
  va_start(args, fmt);
  vsnprintf(text, sizeof text, fmt, args);
  va_end(args);
  ctx->host->log(ctx->host->host, level, text);
}

const char *param(Context *ctx, const char *name) {
  if (ctx->host == nullptr || ctx->host->get_param == nullptr) return nullptr;
  return ctx->host->get_param(ctx->host->host, name);
}

const char *status_name(Status s) { return smd_transport_status_string(s); }

}  // namespace smd_shm
