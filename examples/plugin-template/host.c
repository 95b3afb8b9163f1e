/* host.c - the services the core lends the plugin at init.
 *
 * ABI rules this file follows (smd_transport.h):
 *   - every failing entry explains itself with host->set_error() from the
 *     thread that is about to return the status (the core reads it right
 *     after the call, so the text belongs to that call);
 *   - the plugin never prints: it logs through host->log(), and the core
 *     decides (SMD_DEBUG) what is shown and adds rank and plugin name.
 */
#include "tcp.h" /* first: it selects the system interfaces (_GNU_SOURCE) */

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

static void vset_error(const smd_transport_host_t *host, const char *fmt, va_list args) {
  char text[512];
  vsnprintf(text, sizeof text, fmt, args);
  if (host != NULL && host->set_error != NULL) host->set_error(host->host, text);
}

tcp_status tcp_fail(tcp_ctx *ctx, tcp_status st, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vset_error(ctx->host, fmt, args);
  va_end(args);
  return st;
}

tcp_status tcp_fail_host(const smd_transport_host_t *host, tcp_status st, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vset_error(host, fmt, args);
  va_end(args);
  return st;
}

void tcp_log(tcp_ctx *ctx, int level, const char *fmt, ...) {
  const smd_transport_host_t *host = ctx->host;
  if (host == NULL || host->log == NULL) return;
  char text[512];
  va_list args;
  va_start(args, fmt);
  vsnprintf(text, sizeof text, fmt, args);
  va_end(args);
  host->log(host->host, level, text);
}

int64_t tcp_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
