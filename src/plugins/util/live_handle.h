// The handles the core passes back to a plugin (its context, endpoints,
// requests) are the plugin's own objects behind void pointers; each starts
// with a magic number, so a stale or foreign pointer is refused, not used.
#pragma once

#include "guard.h"
#include "host_calls.h"

namespace smd_plugin {

// `p` as the plugin's T when it is a live one (its magic is `magic`),
// else nullptr.
template <class T, class Magic>
T *live_handle(void *p, Magic magic) {
  auto *h = static_cast<T *>(p);
  return h != nullptr && h->magic == magic ? h : nullptr;
}

// Runs body(ctx) inside guard() once `c` is a live Context; a handle that
// is not one gets SMD_TRANSPORT_ERR_INVALID alone (there is no host to
// report a message to).
template <class Context, class Magic, class Body>
smd_transport_status_t with_live_context(void *c, Magic magic, const char *plugin, const char *what,
                                         Body body) {
  Context *ctx = live_handle<Context>(c, magic);
  if (ctx == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  return guard(ctx->host, plugin, what, [&] { return body(ctx); });
}

// Runs body(ctx, h) when `p` is a live T (its magic is `magic`) that
// belongs to ctx (h->ctx); otherwise fails "<plugin>: <what>: <invalid>".
template <class T, class Context, class Magic, class Body>
smd_transport_status_t with_owned_handle(Context *ctx, void *p, Magic magic, const char *plugin,
                                         const char *what, const char *invalid, Body body) {
  T *h = live_handle<T>(p, magic);
  if (h == nullptr || h->ctx != ctx)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "%s: %s: %s", plugin, what, invalid);
  return body(ctx, h);
}

}  // namespace smd_plugin
