// Copies whose destination the caller will not read again soon: the large
// outputs of the direct algorithms (user buffers many times the cache).
// Ordinary stores first read each destination line into the cache (a
// read-for-ownership), so a copy to memory costs three transfers per byte;
// non-temporal stores write around the cache and cost two. Below
// SMD_STREAM_MIN_BYTES (default 8 MiB) the output may still be in cache
// when the caller reads it, and ordinary copies win.
#pragma once

#include <cstddef>

namespace smd {


// Like memcpy (no overlap), with non-temporal stores where the CPU has
// them. Ends with a store fence, so a release store that follows (posting
// a round) orders after the copied bytes.
void stream_copy(void *dst, const void *src, size_t bytes);

// stream_copy when `op_bytes` (the whole operation's output) reaches
// SMD_STREAM_MIN_BYTES, else an ordinary copy (memmove).
void copy_out(void *dst, const void *src, size_t bytes, size_t op_bytes);

}  // namespace smd
