#include "core/comm/shared_memory.h"

#include <sys/mman.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "core/comm/context.h"
#include "core/plugin/transport.h"
#include "core/util/error.h"

namespace smd {

namespace {

struct Block {
  uint8_t *base = nullptr;
  size_t bytes = 0;
  uint64_t id = 0;
  Bytes handle;
  void *segment = nullptr;         // null: ordinary memory (mmap)
  Transport *transport = nullptr;  // that created the segment
  std::shared_ptr<Context> ctx;    // the world it serves, kept alive
};

struct Registry {
  std::mutex mu;
  // Few blocks (applications allocate pools): a vector searched linearly.
  std::vector<std::unique_ptr<Block>> blocks;
  std::atomic<size_t> shared_count{0};  // blocks with a segment: lookups skip the lock at 0
  uint64_t next_id = 1;
};

Registry &registry() {
  static Registry *r = new Registry();  // never destroyed: blocks may outlive static teardown
  return *r;
}

}  // namespace

void *shared_alloc(const std::shared_ptr<Context> &ctx, size_t bytes) {
  if (bytes == 0) fail(SMD_ERR_INVALID_ARGUMENT, "bytes is 0");
  // 128 TiB: what a user address space holds on x86-64 and arm64.
  if (bytes > (size_t(1) << 47))
    fail(SMD_ERR_NO_MEMORY, "cannot allocate %zu bytes: more than an address space holds", bytes);
  auto b = std::make_unique<Block>();
  b->bytes = bytes;
  b->ctx = ctx;
  Transport *local = ctx->local_transport();
  if (local && local->has(SMD_TRANSPORT_CAP_SEGMENTS)) {
    void *ptr = nullptr;
    b->segment = local->segment_create(bytes, &ptr, &b->handle);
    b->base = static_cast<uint8_t *>(ptr);
    b->transport = local;
  } else {
    void *ptr = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ptr == MAP_FAILED) fail(SMD_ERR_NO_MEMORY, "cannot map %zu bytes", bytes);
    b->base = static_cast<uint8_t *>(ptr);
  }
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  b->id = r.next_id++;
  if (b->segment) r.shared_count.fetch_add(1);
  void *out = b->base;
  r.blocks.push_back(std::move(b));
  return out;
}

void shared_free(void *ptr) {
  Registry &r = registry();
  std::unique_ptr<Block> b;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    for (auto it = r.blocks.begin(); it != r.blocks.end(); ++it)
      if ((*it)->base == ptr) {
        b = std::move(*it);
        r.blocks.erase(it);
        break;
      }
    if (!b)
      fail(SMD_ERR_INVALID_ARGUMENT, "%p was not allocated by smd_mem_alloc (or was freed already)",
           ptr);
    if (b->segment) r.shared_count.fetch_sub(1);
  }
  if (b->segment) b->transport->segment_release(b->segment);
  else munmap(b->base, b->bytes);
  // b->ctx goes last: it may be the world's last reference.
}

bool shared_find(const Context &ctx, const void *ptr, size_t bytes, SharedRef *out) {
  Registry &r = registry();
  if (r.shared_count.load(std::memory_order_relaxed) == 0) return false;
  auto p = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(r.mu);
  for (const auto &b : r.blocks) {
    auto base = reinterpret_cast<uintptr_t>(b->base);
    if (!b->segment || b->ctx.get() != &ctx || p < base || p - base > b->bytes ||
        bytes > b->bytes - (p - base))
      continue;
    out->id = b->id;
    out->offset = p - base;
    out->handle = &b->handle;
    return true;
  }
  return false;
}

}  // namespace smd
