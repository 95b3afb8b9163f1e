// init, finalize and the address blob.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include "address.h"
#include "arg_checks.h"
#include "context.h"

namespace smd_shm {

// Eager messages up to two cells: above that a CMA copy (one copy, no ring
// traffic) beats two copies through the ring.
constexpr size_t kDefaultEagerLimit = 2 * size_t(kCellPayload);
constexpr size_t kMaxEagerLimit = kRingCells / 4 * size_t(kCellPayload);
// A CMA copy advances this much per progress call: large enough that the
// syscall cost vanishes, small enough that progress returns in a few ms.
constexpr size_t kCmaChunk = 8u << 20;

static Status read_params(Context *ctx) {
  ctx->eager_limit = kDefaultEagerLimit;
  if (const char *v = param(ctx, "SMD_SHM_EAGER_LIMIT")) {
    char *end = nullptr;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || n > kMaxEagerLimit)
      return fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                  "SMD_SHM_EAGER_LIMIT=%s is not a byte count of at most %zu", v, kMaxEagerLimit);
    ctx->eager_limit = size_t(n);
  }
  ctx->cma = true;
  if (const char *v = param(ctx, "SMD_SHM_CMA")) {
    if (strcmp(v, "0") == 0) ctx->cma = false;
    else if (strcmp(v, "1") != 0)
      return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "SMD_SHM_CMA=%s: expected 0 or 1", v);
  }
  if (ctx->cma && !cma_probe()) {
    log_line(ctx, SMD_TRANSPORT_LOG_INFO,
             "process_vm_readv unavailable (%s); large messages go through "
             "the rings",
             strerror(errno));
    ctx->cma = false;
  }
  ctx->cma_chunk = kCmaChunk;
  return SMD_TRANSPORT_OK;
}

// A consistent place on the node (the host itself: check_init_args).
static Status check_placement(const smd_transport_host_t *host) {
  if (host->local_rank < 0 || host->local_rank >= host->local_size ||
      host->local_size > host->world_size)
    return fail_host(host, SMD_TRANSPORT_ERR_INVALID,
                     "shm: inconsistent placement: rank %d of %d, local "
                     "rank %d of %d",
                     host->rank, host->world_size, host->local_rank, host->local_size);
  return SMD_TRANSPORT_OK;
}

static Status create_region(Context *ctx) {
  ctx->region_id = random_id();
  char name[64];
  shared_name(name, sizeof name, "shm", ctx->region_id);
  size_t bytes = region_bytes(uint32_t(ctx->local_size));
  if (FileError e = create_shared(name, bytes, &ctx->region))
    return fail(
        ctx,
        e.err == ENOMEM || e.err == ENOSPC ? SMD_TRANSPORT_ERR_NO_MEMORY : SMD_TRANSPORT_ERR_SYSTEM,
        "shm: cannot create the %zu-byte shared region (%s: %s)", bytes, e.step, strerror(e.err));
  auto *h = static_cast<RegionHeader *>(ctx->region.base());
  h->region_id = ctx->region_id;
  h->version = kLayoutVersion;
  h->pid = int32_t(ctx->pid);
  h->local_size = uint32_t(ctx->local_size);
  h->cell_size = kCellSize;
  h->ring_cells = kRingCells;
  store_release(h->magic, kRegionMagic);
  ctx->hdr = h;
  return SMD_TRANSPORT_OK;
}

Status context_init(const smd_transport_host_t *host, void **out) {
  if (Status s = smd_plugin::check_init_args(host, "shm", out)) return s;
  if (Status s = check_placement(host)) return s;
  auto *ctx = smd_plugin::new_context<Context>(host);
  ctx->local_rank = host->local_rank;
  ctx->local_size = host->local_size;
  ctx->pid = getpid();
  ctx->by_local.assign(size_t(ctx->local_size), nullptr);
  Status s = read_params(ctx);
  if (s == SMD_TRANSPORT_OK && !read_node_identity(&ctx->node))
    s = fail(ctx, SMD_TRANSPORT_ERR_SYSTEM, "shm: cannot read /proc/sys/kernel/random/boot_id: %s",
             strerror(errno));
  if (s == SMD_TRANSPORT_OK) s = create_region(ctx);
  if (s != SMD_TRANSPORT_OK) {
    delete ctx;
    return s;
  }
  log_line(ctx, SMD_TRANSPORT_LOG_INFO,
           "shm: region %zu bytes (%d rings of %u x %u B), eager <= %zu B, "
           "large messages by %s",
           ctx->region.size(), ctx->local_size, kRingCells, kCellSize, ctx->eager_limit,
           ctx->cma ? "CMA" : "ring fragments");
  *out = ctx;
  return SMD_TRANSPORT_OK;
}

Status context_finalize(Context *ctx) {
  while (!ctx->endpoints.empty()) endpoint_destroy(ctx, ctx->endpoints.back());
  for (Registration *r : ctx->registrations) {
    r->magic = 0;
    delete r;
  }
  for (Segment *s : ctx->segments) delete s;
  ctx->region.reset();
  ctx->magic = 0;
  delete ctx;
  return SMD_TRANSPORT_OK;
}

Status context_address(Context *ctx, void *buf, size_t *size) {
  if (Status s = smd_plugin::check_address_room(ctx, "shm", buf, size, sizeof(AddressBlob)))
    return s;
  AddressBlob a;
  memset(&a, 0, sizeof a);
  a.magic = kAddressMagic;
  a.version = kAddressVersion;
  a.pid = int32_t(ctx->pid);
  a.region_fd = ctx->region.fd();
  a.local_rank = ctx->local_rank;
  a.local_size = ctx->local_size;
  a.cell_size = kCellSize;
  a.ring_cells = kRingCells;
  a.region_id = ctx->region_id;
  a.region_bytes = ctx->region.size();
  a.node = ctx->node;
  memcpy(buf, &a, sizeof a);
  *size = sizeof a;
  return SMD_TRANSPORT_OK;
}

}  // namespace smd_shm
