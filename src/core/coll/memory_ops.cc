#include "core/coll/memory_ops.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "core/reduce/reduce.h"

namespace smd {

namespace {

void host_copy(void *dst, const void *src, size_t bytes) {
  if (bytes && dst != src) memmove(dst, src, bytes);
}

void *host_alloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) throw std::bad_alloc();
  return p;
}

const MemoryOps kHostOps = {"host",         host_copy,   reduce::reduce, reduce::reduce2,
                            reduce::divide, host_alloc, free};

}  // namespace

const MemoryOps &memory_ops(MemoryKind) { return kHostOps; }

}  // namespace smd
