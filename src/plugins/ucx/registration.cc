// mem_register / mem_deregister. Tagged messages never need this (UCX
// registers what its protocols need, with its own cache); registrations
// serve one-sided reads (mem_pack + iget). A registration maps whole
// pages. No cache here: the core keeps one (src/core/plugin) for plugins
// that need registered buffers, and ucx is not one of them.
#include <unistd.h>

#include <string>

#include "context.h"

namespace smd_ucx {

static uintptr_t page_size() {
  static const uintptr_t size = uintptr_t(sysconf(_SC_PAGESIZE));
  return size;
}

static void unmap_region(Context *ctx, Region *r) {
  if (r == nullptr) return;
  ucs_status_t s = ucp_mem_unmap(ctx->ucp, static_cast<ucp_mem_h>(r->handle));
  if (s != UCS_OK)
    log_line(ctx, SMD_TRANSPORT_LOG_WARN, "ucx: ucp_mem_unmap of [0x%llx, 0x%llx) failed: %s",
             (unsigned long long)r->base, (unsigned long long)r->end, ucs_status_string(s));
  delete r;
}

Status mem_register(Context *ctx, void *ptr, size_t size, void **mr) {
  if (mr == nullptr || (ptr == nullptr && size != 0))
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "ucx: mem_register: %s is NULL", mr ? "ptr" : "mr");
  *mr = nullptr;
  Region *region = nullptr;
  if (size != 0) {
    uintptr_t page = page_size();
    uintptr_t base = reinterpret_cast<uintptr_t>(ptr) & ~(page - 1);
    uintptr_t end = (reinterpret_cast<uintptr_t>(ptr) + size + page - 1) & ~(page - 1);
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
                  s == UCS_ERR_NO_MEMORY ? SMD_TRANSPORT_ERR_NO_MEMORY : SMD_TRANSPORT_ERR_SYSTEM,
                  "ucx: cannot register %zu bytes at %p: %s%s%s", size, ptr, ucs_status_string(s),
                  said.empty() ? "" : "; UCX says: ", said.c_str());
    }
    region = new Region{base, end, memh, {}};
  }
  auto *g = new Registration{kRegistrationMagic, region, reinterpret_cast<uintptr_t>(ptr), size};
  ctx->registrations.insert(g);
  *mr = g;
  return SMD_TRANSPORT_OK;
}

Status mem_deregister(Context *ctx, void *mr) {
  auto *g = static_cast<Registration *>(mr);
  if (ctx->registrations.count(g) == 0)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                "ucx: mem_deregister: %p is not a registration of this context", mr);
  ctx->registrations.erase(g);
  unmap_region(ctx, g->region);
  g->magic = 0;
  delete g;
  return SMD_TRANSPORT_OK;
}

void registrations_release_all(Context *ctx) {
  for (Registration *g : ctx->registrations) {
    unmap_region(ctx, g->region);
    g->magic = 0;
    delete g;
  }
  ctx->registrations.clear();
}

}  // namespace smd_ucx
