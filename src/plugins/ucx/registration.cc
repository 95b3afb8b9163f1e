// mem_register / mem_deregister through the registration cache. Tagged
// messages never need this (UCX registers what its protocols need, with
// its own cache); registrations serve one-sided reads (mem_pack + iget).
// A registration covers whole pages, and one region serves every
// registration inside it.
#include <unistd.h>

#include <utility>
#include <vector>

#include "context.h"

namespace smd_ucx {

static uintptr_t page_size() {
  static const uintptr_t size = uintptr_t(sysconf(_SC_PAGESIZE));
  return size;
}

static void unmap_regions(Context *ctx, const std::vector<Region *> &regions) {
  for (Region *r : regions) {
    if (r->handle != nullptr) {
      ucs_status_t s = ucp_mem_unmap(ctx->ucp, static_cast<ucp_mem_h>(r->handle));
      if (s != UCS_OK)
        log_line(ctx, SMD_TRANSPORT_LOG_WARN,
                 "ucx: ucp_mem_unmap of [0x%llx, 0x%llx) failed: %s",
                 (unsigned long long)r->base, (unsigned long long)r->end,
                 ucs_status_string(s));
    }
    delete r;
  }
}

// Forget cached regions whose memory was unmapped since we last looked.
static void apply_unmaps(Context *ctx) {
  if (!ctx->unmap_events) return;
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  std::vector<Region *> gone;
  if (unmap_log_read(&ctx->unmaps, &ranges)) {
    for (auto &[start, end] : ranges) ctx->regs.invalidate(start, end, &gone);
  } else {
    ctx->regs.drop_idle(&gone);
  }
  unmap_regions(ctx, gone);
}

Status mem_register(Context *ctx, void *ptr, size_t size, void **mr) {
  if (mr == nullptr || (ptr == nullptr && size != 0))
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "ucx: mem_register: %s is NULL",
                mr ? "ptr" : "mr");
  *mr = nullptr;
  Region *region = nullptr;
  if (size != 0) {
    apply_unmaps(ctx);
    uintptr_t page = page_size();
    uintptr_t base = reinterpret_cast<uintptr_t>(ptr) & ~(page - 1);
    uintptr_t end = (reinterpret_cast<uintptr_t>(ptr) + size + page - 1) & ~(page - 1);
    region = ctx->regs.acquire(base, end);
    if (region == nullptr) {
      ucp_mem_map_params_t p;
      p.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
      p.address = reinterpret_cast<void *>(base);
      p.length = end - base;
      ucp_mem_h memh = nullptr;
      ucx_log_clear();
      ucs_status_t s = ucp_mem_map(ctx->ucp, &p, &memh);
      if (s != UCS_OK) {
        std::string said = ucx_log_last();
        return fail(ctx,
                    s == UCS_ERR_NO_MEMORY ? SMD_TRANSPORT_ERR_NO_MEMORY
                                           : SMD_TRANSPORT_ERR_SYSTEM,
                    "ucx: cannot register %zu bytes at %p: %s%s%s", size, ptr,
                    ucs_status_string(s), said.empty() ? "" : "; UCX says: ",
                    said.c_str());
      }
      region = ctx->regs.insert(base, end, memh);
    }
  }
  auto *g = new Registration{kRegistrationMagic, region,
                             reinterpret_cast<uintptr_t>(ptr), size};
  ctx->registrations.insert(g);
  *mr = g;
  return SMD_TRANSPORT_OK;
}

Status mem_deregister(Context *ctx, void *mr) {
  auto *g = static_cast<Registration *>(mr);
  if (ctx->registrations.count(g) == 0)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                "ucx: mem_deregister: %p is not a registration of this context",
                mr);
  ctx->registrations.erase(g);
  std::vector<Region *> gone;
  if (g->region != nullptr) ctx->regs.release(g->region, &gone);
  g->magic = 0;
  delete g;
  unmap_regions(ctx, gone);
  return SMD_TRANSPORT_OK;
}

void registrations_release_all(Context *ctx) {
  for (Registration *g : ctx->registrations) {
    g->magic = 0;
    delete g;
  }
  ctx->registrations.clear();
  std::vector<Region *> all;
  ctx->regs.drop_all(&all);
  unmap_regions(ctx, all);
}

}  // namespace smd_ucx
