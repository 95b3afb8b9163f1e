// The first checks of the address exchange, the same in every plugin:
// get_address's buffer must hold the whole address (the caller learns the
// size needed), and connect's peer must be a rank of the world.
#pragma once

#include <cstddef>
#include <cstdint>

#include "host_calls.h"

namespace smd_plugin {

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
