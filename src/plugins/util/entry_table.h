// The v1 table a plugin built on a Context and its Endpoints (efa, shm,
// ucx) exports. Each entry checks its handles, catches every C++
// exception (none may cross the C ABI: guard.h) and calls into the
// plugin; where that is the same in every plugin but for the plugin
// called, the entry is written here once. A plugin's entry.cc describes
// the plugin in a traits struct and writes only its own entries.
//
// The traits struct derives from PluginTraits (its handle types, their
// magics, and the defaults) and holds:
//   kName                  the table's name; every message begins with it
//   kDescription, kCaps    the table's description and caps
//   context_init           init's body: (host, out)
//   peer_dead(ctx, ep)     check_peer's verdict; ep->death says why
//   test, cancel           its entries
// and, where the default does not fit: kParams; endpoint_closed(ep);
// isend, irecv and iget (default: the ones below, which take no
// registration); segment_create, segment_attach, segment_release,
// context_caps and probe (default: none).
//
// The shared entries call, in the plugin's namespace (found by its
// Context's type), what every plugin defines under the same name:
// context_finalize, context_address, endpoint_connect,
// endpoint_disconnect, mem_register, mem_deregister, mem_pack, progress,
// wait_for_work; and for the default isend, irecv and iget, send_start,
// recv_start and rma_get.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "guard.h"
#include "host_calls.h"
#include "live_handle.h"

namespace smd_plugin {

// What a plugin's traits struct derives from.
template <class ContextT, auto kContextMagicV, class EndpointT, auto kEndpointMagicV>
struct PluginTraits {
  using Context = ContextT;
  using Endpoint = EndpointT;
  static constexpr auto kContextMagic = kContextMagicV;
  static constexpr auto kEndpointMagic = kEndpointMagicV;
  static constexpr const smd_transport_param_t *kParams = nullptr;
  // Whether ep is disconnected but not yet freed: never, unless the
  // plugin keeps such endpoints.
  static bool endpoint_closed(const EndpointT *) { return false; }
  // nullptr: the shared isend, irecv and iget below.
  static constexpr std::nullptr_t isend = nullptr, irecv = nullptr, iget = nullptr;
  // nullptr: the table has no such entry.
  static constexpr std::nullptr_t segment_create = nullptr, segment_attach = nullptr,
                                  segment_release = nullptr, context_caps = nullptr,
                                  probe = nullptr;
};

// Runs body(ctx) inside guard() once c is a live context of Plugin.
template <class Plugin, class Body>
smd_transport_status_t with_context(void *c, const char *what, Body body) {
  return with_live_context<typename Plugin::Context>(c, Plugin::kContextMagic, Plugin::kName, what,
                                                     body);
}

// Runs body(ctx, ep) once e is also a live endpoint of ctx; otherwise
// fails "<plugin>: <what>: invalid endpoint".
template <class Plugin, class Body>
smd_transport_status_t with_endpoint(void *c, void *e, const char *what, Body body) {
  using Endpoint = typename Plugin::Endpoint;
  return with_context<Plugin>(c, what, [&](typename Plugin::Context *ctx) {
    auto *ep = live_handle<Endpoint>(e, Plugin::kEndpointMagic);
    if (ep == nullptr || ep->ctx != ctx || Plugin::endpoint_closed(ep))
      return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "%s: %s: invalid endpoint", Plugin::kName, what);
    return body(ctx, ep);
  });
}

// Runs body(ctx, ep) for isend and irecv once the handles are live, the
// request pointer given and the buffer there unless size is 0.
template <class Plugin, class Body>
smd_transport_status_t with_transfer(void *c, void *e, const char *what, const void *buf,
                                     size_t size, void **request, Body body) {
  return with_endpoint<Plugin>(c, e, what, [&](auto *ctx, auto *ep) {
    if (request == nullptr || (buf == nullptr && size != 0))
      return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "%s: %s: %s is NULL", Plugin::kName, what,
                  request ? "buf" : "request");
    return body(ctx, ep);
  });
}

// test, for a plugin whose requests progress() finishes and that keep
// their bytes, status and error: progress once if the request is not
// done, then its outcome, and the request released. The plugin's traits
// give find_request(ctx, p) (nullptr unless a live request),
// finished(r) and release(ctx, r).
template <class Plugin>
smd_transport_status_t test_after_progress(void *c, void *request, int *done, size_t *size) {
  return with_context<Plugin>(c, "test", [&](typename Plugin::Context *ctx) {
    auto *r = Plugin::find_request(ctx, request);
    if (r == nullptr || done == nullptr)
      return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "%s: test: %s", Plugin::kName,
                  r ? "done is NULL" : "not a live request");
    if (!Plugin::finished(r)) progress(ctx);
    if (!Plugin::finished(r)) {
      *done = 0;
      return SMD_TRANSPORT_IN_PROGRESS;
    }
    *done = 1;
    if (size != nullptr) *size = size_t(r->bytes);
    smd_transport_status_t s = r->status;
    if (s != SMD_TRANSPORT_OK) fail(ctx, s, "%s", r->error.c_str());
    Plugin::release(ctx, r);
    return s;
  });
}

// Plugin's v1 table: the shared entries, and the plugin's own from its
// traits.
template <class Plugin>
constexpr smd_transport_v1_t v1_table() {
  using Context = typename Plugin::Context;
  using Endpoint = typename Plugin::Endpoint;
  smd_transport_v1_t t{};
  t.struct_size = sizeof(smd_transport_v1_t);
  t.abi_version = SMD_TRANSPORT_ABI_VERSION;
  t.name = Plugin::kName;
  t.description = Plugin::kDescription;
  t.caps = Plugin::kCaps;
  t.params = Plugin::kParams;

  t.init = [](const smd_transport_host_t *host, void **ctx) {
    return guard(host, Plugin::kName, "init", [&] { return Plugin::context_init(host, ctx); });
  };
  t.finalize = [](void *c) {
    return with_context<Plugin>(c, "finalize", [](Context *ctx) { return context_finalize(ctx); });
  };
  t.get_address = [](void *c, void *buf, size_t *size) {
    return with_context<Plugin>(c, "get_address",
                                [&](Context *ctx) { return context_address(ctx, buf, size); });
  };
  t.connect = [](void *c, int32_t peer, const void *address, size_t size, void **endpoint) {
    return with_context<Plugin>(c, "connect", [&](Context *ctx) {
      return endpoint_connect(ctx, peer, address, size, endpoint);
    });
  };
  t.disconnect = [](void *c, void *e) {
    return with_endpoint<Plugin>(c, e, "disconnect", [](Context *ctx, Endpoint *ep) {
      return endpoint_disconnect(ctx, ep);
    });
  };
  t.mem_register = [](void *c, void *ptr, size_t size, uint32_t, void **mr) {
    return with_context<Plugin>(c, "mem_register",
                                [&](Context *ctx) { return mem_register(ctx, ptr, size, mr); });
  };
  t.mem_deregister = [](void *c, void *mr) {
    return with_context<Plugin>(c, "mem_deregister",
                                [&](Context *ctx) { return mem_deregister(ctx, mr); });
  };
  t.mem_pack = [](void *c, void *mr, void *buf, size_t *size) {
    return with_context<Plugin>(c, "mem_pack",
                                [&](Context *ctx) { return mem_pack(ctx, mr, buf, size); });
  };

  if constexpr (std::is_null_pointer_v<decltype(Plugin::isend)>)
    t.isend = [](void *c, void *e, const void *buf, size_t size, void *, uint64_t tag,
                 void **request) {
      return with_transfer<Plugin>(
          c, e, "isend", buf, size, request,
          [&](Context *ctx, Endpoint *ep) { return send_start(ctx, ep, buf, size, tag, request); });
    };
  else t.isend = Plugin::isend;
  if constexpr (std::is_null_pointer_v<decltype(Plugin::irecv)>)
    t.irecv = [](void *c, void *e, void *buf, size_t size, void *, uint64_t tag, void **request) {
      return with_transfer<Plugin>(
          c, e, "irecv", buf, size, request,
          [&](Context *ctx, Endpoint *ep) { return recv_start(ctx, ep, buf, size, tag, request); });
    };
  else t.irecv = Plugin::irecv;
  if constexpr (std::is_null_pointer_v<decltype(Plugin::iget)>)
    t.iget = [](void *c, void *e, void *local, void *, uint64_t remote, const void *rkey,
                size_t rkey_size, size_t size, void **request) {
      return with_endpoint<Plugin>(c, e, "iget", [&](Context *ctx, Endpoint *ep) {
        if (request == nullptr)
          return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "%s: iget: request is NULL", Plugin::kName);
        return rma_get(ctx, ep, local, remote, rkey, rkey_size, size, request);
      });
    };
  else t.iget = Plugin::iget;

  t.test = Plugin::test;
  t.cancel = Plugin::cancel;
  t.progress = [](void *c) {
    return with_context<Plugin>(c, "progress", [](Context *ctx) {
      progress(ctx);
      return SMD_TRANSPORT_OK;
    });
  };
  t.wait = [](void *c, int64_t timeout_us) {
    return with_context<Plugin>(c, "wait",
                                [&](Context *ctx) { return wait_for_work(ctx, timeout_us); });
  };
  t.check_peer = [](void *c, void *e) {
    return with_endpoint<Plugin>(c, e, "check_peer", [](Context *ctx, Endpoint *ep) {
      if (!Plugin::peer_dead(ctx, ep)) return SMD_TRANSPORT_OK;
      return fail(ctx, SMD_TRANSPORT_ERR_PEER, "%s", ep->death.c_str());
    });
  };
  t.segment_create = Plugin::segment_create;
  t.segment_attach = Plugin::segment_attach;
  t.segment_release = Plugin::segment_release;
  t.context_caps = Plugin::context_caps;
  t.probe = Plugin::probe;
  return t;
}

}  // namespace smd_plugin
