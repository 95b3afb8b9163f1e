// UCX writes its warnings to stdout unless told otherwise, which a plugin
// must not do. While contexts exist, a UCX log handler sends UCX's lines
// to the first live context's host log instead, and remembers the
// calling thread's last warning so that a failure (an endpoint UCX cannot
// create, say) can be explained in UCX's own words.
#include <ucs/debug/log_def.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "context.h"

namespace smd_ucx {

namespace {

std::mutex g_mu;
std::vector<const smd_transport_host_t *> g_hosts;
bool g_pushed = false;
unsigned g_depth = 0;  // handlers on UCX's stack right after our push
thread_local std::string t_last;

int level_for_host(ucs_log_level_t level) {
  if (level <= UCS_LOG_LEVEL_WARN) return SMD_TRANSPORT_LOG_WARN;
  if (level <= UCS_LOG_LEVEL_INFO) return SMD_TRANSPORT_LOG_INFO;
  return SMD_TRANSPORT_LOG_TRACE;
}

ucs_log_func_rc_t on_ucx_log(const char *file, unsigned line, const char *, ucs_log_level_t level,
                             const ucs_log_component_config_t *, const char *fmt, va_list ap) {
  char text[1024];
  va_list copy;
  va_copy(copy, ap);
  vsnprintf(text, sizeof text, fmt, copy);
  va_end(copy);
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_hosts.empty()) return UCS_LOG_FUNC_RC_CONTINUE;
  if (level <= UCS_LOG_LEVEL_WARN) t_last = text;
  const smd_transport_host_t *h = g_hosts.front();
  if (h->log != nullptr) {
    const char *base = file != nullptr ? strrchr(file, '/') : nullptr;
    char full[1200];
    snprintf(full, sizeof full, "UCX %s: %s (%s:%u)",
             level <= UCS_LOG_LEVEL_ERROR  ? "error"
             : level <= UCS_LOG_LEVEL_WARN ? "warning"
                                           : "info",
             text, base != nullptr ? base + 1 : (file ? file : "?"), line);
    h->log(h->host, level_for_host(level), full);
  }
  return UCS_LOG_FUNC_RC_STOP;
}

}  // namespace

void ucx_log_attach(const smd_transport_host_t *host) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_hosts.push_back(host);
  if (!g_pushed) {
    ucs_log_push_handler(on_ucx_log);
    g_depth = ucs_log_num_handlers();
    g_pushed = true;
  }
}

void ucx_log_detach(const smd_transport_host_t *host) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (auto it = g_hosts.begin(); it != g_hosts.end(); ++it)
    if (*it == host) {
      g_hosts.erase(it);
      break;
    }
  // Pop only our own handler: if someone pushed after us, ours stays and
  // passes lines on (CONTINUE) while no context is live.
  if (g_hosts.empty() && g_pushed && ucs_log_num_handlers() == g_depth) {
    ucs_log_pop_handler();
    g_pushed = false;
  }
}

std::string ucx_log_last() { return t_last; }

void ucx_log_clear() { t_last.clear(); }

}  // namespace smd_ucx
