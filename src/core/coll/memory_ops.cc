#include "core/coll/memory_ops.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "core/gpu/device_ops.h"
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

const MemoryOps kHostOps = {"host",     host_copy, reduce::reduce, reduce::reduce2, reduce::divide,
                            host_alloc, free};

const MemoryOps kDeviceOps = {
    "device",           gpu::device_copy,  gpu::device_reduce, gpu::device_reduce2,
    gpu::device_divide, gpu::device_alloc, gpu::device_release};

}  // namespace

const MemoryOps &memory_ops(MemoryKind kind) {
  return kind == MemoryKind::kDevice ? kDeviceOps : kHostOps;
}

}  // namespace smd
