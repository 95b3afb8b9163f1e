// How algorithms move and combine data, chosen by the memory kind of the
// call's buffers: algorithms never call memcpy or a CPU reduction kernel
// directly, so a new memory kind (device memory: the GPU issue) is a new
// MemoryOps table, not a second copy of every algorithm. Arena (direct)
// algorithms are host-only (their registry rows' memory kinds say so) and
// keep their own streaming-store copies.
#pragma once

#include <smd.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace smd {

// kDevice: CUDA device (or managed) memory; its ops run on the calling
// thread's stream (gpu::StreamScope) and return when the work is done.
enum class MemoryKind : int { kHost = 0, kDevice = 1 };

struct MemoryOps {
  const char *name;
  // dst may equal src (nothing to do); the ranges may overlap.
  void (*copy)(void *dst, const void *src, size_t bytes);
  // dst = op over srcs[0..nsrc) elementwise, divided by divisor if > 1.
  void (*reduce)(void *dst, const void *const *srcs, int nsrc, size_t count, smd_datatype_t dt,
                 smd_op_t op, int divisor);
  // dst = a op b (dst may be a or b).
  void (*reduce2)(void *dst, const void *a, const void *b, size_t count, smd_datatype_t dt,
                  smd_op_t op);
  // buf /= divisor (the end of SMD_AVG).
  void (*divide)(void *buf, size_t count, smd_datatype_t dt, int divisor);
  // Scratch memory of this kind (at least one byte), and its release.
  void *(*alloc)(size_t bytes);
  void (*release)(void *p);
};

const MemoryOps &memory_ops(MemoryKind kind);

// Scratch memory of a kind for the length of one algorithm.
class Scratch {
 public:
  Scratch(const MemoryOps &ops, size_t bytes)
      : ops_(&ops), p_(static_cast<uint8_t *>(ops.alloc(bytes ? bytes : 1))) {}
  // A copy of `bytes` at `copy_of`: for algorithms that reduce in place
  // while the caller's input stays as it was.
  Scratch(const MemoryOps &ops, const void *copy_of, size_t bytes) : Scratch(ops, bytes) {
    ops.copy(p_, copy_of, bytes);
  }
  ~Scratch() { ops_->release(p_); }
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;
  uint8_t *data() const { return p_; }

 private:
  const MemoryOps *ops_;
  uint8_t *p_;
};

}  // namespace smd
