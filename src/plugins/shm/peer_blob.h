// Reading a blob a peer packed for this plugin (an RMA remote key, a
// segment handle): it must be this plugin's struct, by its size and magic,
// and have been packed by the process the endpoint reaches.
#pragma once

#include <cstdint>
#include <cstring>

#include "context.h"

namespace smd_shm {

// Copies `size` bytes of `data` into *out when they are a Blob of `magic`
// packed by ep's peer; otherwise fails naming `what`, after the
// operation's prefix `op` ("iget: " or "").
template <class Blob>
Status read_peer_blob(Context *ctx, Endpoint *ep, const void *data, size_t size, uint64_t magic,
                      const char *op, const char *what, Blob *out) {
  if (size != sizeof *out)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "shm: %s%s of %zu bytes, expected %zu", op, what,
                size, sizeof *out);
  memcpy(out, data, sizeof *out);
  if (out->magic != magic)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "shm: %snot an shm %s", op, what);
  if (out->pid != int32_t(ep->pid))
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "shm: %s%s of pid %d given for rank %d (pid %d)",
                op, what, out->pid, ep->peer, int(ep->pid));
  return SMD_TRANSPORT_OK;
}

}  // namespace smd_shm
