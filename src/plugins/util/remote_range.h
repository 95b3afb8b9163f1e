// The bounds check of a one-sided read through a remote key, for the
// in-tree plugins that take keys (shm, ucx): one copy of the overflow-safe
// comparison and of its error text.
#pragma once

#include <cstddef>
#include <cstdint>

#include "host_calls.h"

namespace smd_plugin {

// SMD_TRANSPORT_OK when [remote, +size) lies inside the registration
// [base, +length) of rank `peer`, else ERR_INVALID explained to ctx's host;
// `what` prefixes the message ("shm: iget"). No sum is formed, so no
// address near the top of the range can wrap.
template <class Context>
smd_transport_status_t check_remote_range(Context *ctx, const char *what, uint64_t remote,
                                          size_t size, uint64_t base, uint64_t length, int peer) {
  if (remote < base || size > length || remote - base > length - size)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                "%s: [0x%llx, +%zu) lies outside the registration [0x%llx, +%llu) of rank %d", what,
                (unsigned long long)remote, size, (unsigned long long)base,
                (unsigned long long)length, peer);
  return SMD_TRANSPORT_OK;
}

}  // namespace smd_plugin
