// Memory the application allocates through smd_mem_alloc: a segment of the
// node-local transport, so that peers on the node can map it and read a
// collective's input where it lies (one copy instead of two through the
// arena's staging buffers). Process-wide: a block belongs to the world
// (Context) it was allocated for and keeps that world alive until freed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/util/bytes.h"

namespace smd {

class Context;

// Where a buffer lies in a shared block: what a peer needs to map it.
struct SharedRef {
  uint64_t id = 0;                // unique in this process, never reused
  size_t offset = 0;              // of the buffer within the block
  const Bytes *handle = nullptr;  // the transport's segment handle
};

// `bytes` of memory for `ctx`'s collectives: a shared segment when the
// world's node-local transport offers them, otherwise ordinary memory
// (collectives then stage it as usual). Throws on failure.
void *shared_alloc(const std::shared_ptr<Context> &ctx, size_t bytes);
// Releases a block from shared_alloc (SMD_ERR_INVALID_ARGUMENT otherwise).
// Peers that mapped it keep their mapping until they drop it.
void shared_free(void *ptr);
// Whether [ptr, ptr + bytes) lies wholly in one shared block of ctx's.
bool shared_find(const Context &ctx, const void *ptr, size_t bytes, SharedRef *out);

}  // namespace smd
