// The first checks of init and of the address exchange, the same in every
// plugin: init's out pointer and host, get_address's buffer, which must
// hold the whole address (the caller learns the size needed), and
// connect's peer, which must be a rank of the world.
#pragma once

#include <cstddef>
#include <cstdint>

#include "host_calls.h"

namespace smd_plugin {

// init's arguments: *out cleared, then SMD_TRANSPORT_ERR_INVALID unless
// out is given and the host passes check_host.
inline smd_transport_status_t check_init_args(const smd_transport_host_t *host, const char *plugin,
                                              void **out) {
  if (out == nullptr)
    return fail_host(host, SMD_TRANSPORT_ERR_INVALID, "%s: init: ctx is NULL", plugin);
  *out = nullptr;
  return check_host(host, plugin);
}

// A new context for init, of host's rank in its world.
template <class Context>
Context *new_context(const smd_transport_host_t *host) {
  auto *ctx = new Context;
  ctx->host = host;
  ctx->rank = host->rank;
  ctx->world_size = host->world_size;
  return ctx;
}

// SMD_TRANSPORT_ERR_INVALID, with *size set to `need`, unless size is
// given and buf holds `need` bytes; SMD_TRANSPORT_OK otherwise.
template <class Context>
smd_transport_status_t check_address_room(Context *ctx, const char *plugin, const void *buf,
                                          size_t *size, size_t need) {
  if (size == nullptr)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "%s: get_address: size is NULL", plugin);
  if (buf == nullptr || *size < need) {
    size_t had = buf != nullptr ? *size : 0;
    *size = need;
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "%s: address buffer of %zu bytes, need %zu", plugin,
                had, need);
  }
  return SMD_TRANSPORT_OK;
}

// connect's arguments: *out cleared, then SMD_TRANSPORT_ERR_INVALID unless
// out is given and peer is a rank of ctx's world.
template <class Context>
smd_transport_status_t check_connect_args(Context *ctx, const char *plugin, int32_t peer,
                                          void **out) {
  if (out == nullptr)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "%s: connect: endpoint is NULL", plugin);
  *out = nullptr;
  if (peer < 0 || peer >= ctx->world_size)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "%s: connect: rank %d outside the world of %d",
                plugin, peer, ctx->world_size);
  return SMD_TRANSPORT_OK;
}

}  // namespace smd_plugin
