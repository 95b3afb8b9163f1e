// Segments: memfds that the creator and its peers map for plain loads and
// stores (the core's direct shared-memory collectives use them).
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "context.h"
#include "peer_blob.h"

namespace smd_shm {

struct SegmentHandle {
  uint64_t magic;
  int32_t pid;
  int32_t fd;
  uint64_t id;    // also in the memfd's name
  uint64_t size;  // as requested
};
constexpr uint64_t kSegmentMagic = 0x5447455344444d53ull;  // "SMDDSEGT"

Status segment_create(Context *ctx, size_t size, void **ptr, void **segment, void *handle,
                      size_t *handle_size) {
  if (ptr == nullptr || segment == nullptr || handle_size == nullptr)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "shm: segment_create: an output pointer is NULL");
  if (handle == nullptr || *handle_size < sizeof(SegmentHandle)) {
    size_t had = handle ? *handle_size : 0;
    *handle_size = sizeof(SegmentHandle);
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "shm: segment handle buffer of %zu bytes, need %zu",
                had, sizeof(SegmentHandle));
  }
  if (size == 0) return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "shm: segment of 0 bytes");
  auto seg = std::make_unique<Segment>();
  uint64_t id = random_id();
  char name[64];
  shared_name(name, sizeof name, "seg", id);
  size_t bytes = (size + kPage - 1) / kPage * kPage;
  if (FileError e = create_shared(name, bytes, &seg->map))
    return fail(
        ctx,
        e.err == ENOMEM || e.err == ENOSPC ? SMD_TRANSPORT_ERR_NO_MEMORY : SMD_TRANSPORT_ERR_SYSTEM,
        "shm: cannot create a %zu-byte segment (%s: %s)", size, e.step, strerror(e.err));
  SegmentHandle h{kSegmentMagic, int32_t(ctx->pid), seg->map.fd(), id, size};
  memcpy(handle, &h, sizeof h);
  *handle_size = sizeof h;
  *ptr = seg->map.base();
  *segment = seg.get();
  ctx->segments.insert(seg.release());
  return SMD_TRANSPORT_OK;
}

Status segment_attach(Context *ctx, Endpoint *ep, const void *handle, size_t handle_size,
                      void **ptr, size_t *size, void **segment) {
  if (ptr == nullptr || segment == nullptr || handle == nullptr)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "shm: segment_attach: a pointer argument is NULL");
  SegmentHandle h;
  if (Status s =
          read_peer_blob(ctx, ep, handle, handle_size, kSegmentMagic, "", "segment handle", &h))
    return s;
  if (ep->dead) return fail(ctx, SMD_TRANSPORT_ERR_PEER, "%s", ep->death.c_str());
  auto seg = std::make_unique<Segment>();
  char name[64];
  shared_name(name, sizeof name, "seg", h.id);
  if (FileError e = open_shared(ep->pid, h.fd, name, h.size, &seg->map, nullptr))
    return fail(
        ctx,
        e.err == ENOENT || e.err == ESTALE ? SMD_TRANSPORT_ERR_INVALID : SMD_TRANSPORT_ERR_SYSTEM,
        "shm: cannot attach rank %d's %llu-byte segment "
        "/proc/%d/fd/%d (%s: %s)%s",
        ep->peer, (unsigned long long)h.size, h.pid, h.fd, e.step, strerror(e.err),
        e.err == ENOENT || e.err == ESTALE ? ": released by its creator?" : "");
  *ptr = seg->map.base();
  if (size != nullptr) *size = h.size;
  *segment = seg.get();
  ctx->segments.insert(seg.release());
  return SMD_TRANSPORT_OK;
}

Status segment_release(Context *ctx, Segment *segment) {
  if (ctx->segments.erase(segment) == 0)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                "shm: segment_release: %p is not a segment of this context",
                static_cast<void *>(segment));
  delete segment;
  return SMD_TRANSPORT_OK;
}

}  // namespace smd_shm
