// Memory registration: explicit registrations (mem_register, whose remote
// keys mem_pack publishes for a peer's iget), and the descriptors of local
// buffers when the provider needs them (FI_MR_LOCAL, or SMD_EFA_MR_LOCAL).
// Such a context says SMD_TRANSPORT_CAP_REGISTRATION_REQUIRED (entry.cc),
// and the core passes every buffer registered through its registration
// cache; a core older than context_caps() passes none, and each buffer is
// then registered for its request alone.
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <cstring>

#include "context.h"

namespace smd_efa {

namespace {

constexpr uint32_t kRkeyMagic = 0x4b524645;  // "EFRK"

// What mem_pack publishes: enough for a peer to address the region.
struct RemoteKey {
  uint32_t magic;
  uint32_t reserved;
  uint64_t key;
  uint64_t base;
  uint64_t size;
};

uint64_t access_flags(const Context *ctx) {
  uint64_t a = FI_SEND | FI_RECV;
  if (ctx->prov.rma) a |= FI_READ | FI_REMOTE_READ;
  return a;
}

}  // namespace

int register_region(Context *ctx, uintptr_t base, size_t len, struct fid_mr **out) {
  uint64_t key = ctx->prov.mr_prov_key ? 0 : ctx->next_key++;
  struct fid_mr *mr = nullptr;
  int rc = fi_mr_reg(ctx->domain, reinterpret_cast<void *>(base), len, access_flags(ctx), 0, key, 0,
                     &mr, nullptr);
  if (rc != 0) return rc;
  if (ctx->prov.mr_endpoint) {
    rc = fi_mr_bind(mr, &ctx->ep->fid, 0);
    if (rc == 0) rc = fi_mr_enable(mr);
    if (rc != 0) {
      fi_close(&mr->fid);
      return rc;
    }
  }
  *out = mr;
  return 0;
}

Status mem_register(Context *ctx, void *ptr, size_t size, void **out) {
  if (out == nullptr || (ptr == nullptr && size != 0))
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "efa: mem_register: %s is NULL",
                out ? "ptr" : "mr");
  auto *reg = new Registration{
      kRegistrationMagic, nullptr, nullptr, 0, reinterpret_cast<uintptr_t>(ptr), size};
  if (size != 0) {
    int rc = register_region(ctx, reg->base, size, &reg->mr);
    if (rc != 0) {
      delete reg;
      return fail(ctx, status_of_fi_error(-rc),
                  "efa: registering %zu B at %p with provider %s failed: %s", size, ptr,
                  ctx->prov.name.c_str(), fi_strerror(-rc));
    }
    reg->desc = fi_mr_desc(reg->mr);
    reg->key = fi_mr_key(reg->mr);
  }
  ctx->registrations.insert(reg);
  *out = reg;
  return SMD_TRANSPORT_OK;
}

Status mem_deregister(Context *ctx, void *mr) {
  auto *reg = static_cast<Registration *>(mr);
  if (reg == nullptr || ctx->registrations.erase(reg) == 0)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "efa: mem_deregister: not a registration");
  int rc = reg->mr != nullptr ? fi_close(&reg->mr->fid) : 0;
  reg->magic = 0;
  delete reg;
  if (rc != 0)
    return fail(ctx, SMD_TRANSPORT_ERR_SYSTEM, "efa: closing a registration failed: %s",
                fi_strerror(-rc));
  return SMD_TRANSPORT_OK;
}

Status mem_pack(Context *ctx, void *mr, void *buf, size_t *size) {
  auto *reg = static_cast<Registration *>(mr);
  if (!ctx->prov.rma)
    return fail(ctx, SMD_TRANSPORT_ERR_UNSUPPORTED, "efa: provider %s offers no RMA reads",
                ctx->prov.name.c_str());
  if (reg == nullptr || ctx->registrations.count(reg) == 0 || size == nullptr)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "efa: mem_pack: %s",
                size ? "not a registration" : "size is NULL");
  if (buf == nullptr || *size < sizeof(RemoteKey)) {
    size_t had = buf != nullptr ? *size : 0;
    *size = sizeof(RemoteKey);
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "efa: remote key buffer of %zu B, need %zu", had,
                sizeof(RemoteKey));
  }
  RemoteKey k{kRkeyMagic, 0, reg->key, reg->base, reg->size};
  memcpy(buf, &k, sizeof k);
  *size = sizeof k;
  return SMD_TRANSPORT_OK;
}

Status mem_get(Context *ctx, Endpoint *ep, void *local, Registration *local_mr, uint64_t remote,
               const void *rkey, size_t rkey_size, size_t size, void **request) {
  if (!ctx->prov.rma)
    return fail(ctx, SMD_TRANSPORT_ERR_UNSUPPORTED, "efa: provider %s offers no RMA reads",
                ctx->prov.name.c_str());
  RemoteKey k;
  if (rkey == nullptr || rkey_size != sizeof k)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                "efa: iget needs the %zu-byte key mem_pack made (got %zu B): "
                "only registered memory is readable",
                sizeof k, rkey ? rkey_size : 0);
  memcpy(&k, rkey, sizeof k);
  if (k.magic != kRkeyMagic)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "efa: iget: not an efa remote key");
  if (remote < k.base || size > k.size || remote - k.base > k.size - size)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                "efa: iget of %zu B at 0x%llx outside the registration [0x%llx, +%llu)", size,
                (unsigned long long)remote, (unsigned long long)k.base, (unsigned long long)k.size);
  if (local == nullptr && size != 0)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "efa: iget: local is NULL");
  // Without FI_MR_VIRT_ADDR a remote address is an offset in the region
  // (cross-memory reads take the address as it is).
  bool virt = ctx->prov.mr_virt_addr || (ctx->prov.framed && ep->cma);
  uint64_t addr = virt ? remote : remote - k.base;
  return start_get(ctx, ep, local, local_mr, addr, k.key, size, request);
}

Status local_descriptor(Context *ctx, Request *r, Registration *mr) {
  if (mr != nullptr) {
    uintptr_t lo = reinterpret_cast<uintptr_t>(r->buf);
    if (lo < mr->base || r->size > mr->size || lo - mr->base > mr->size - r->size)
      return fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                  "efa: a %zu-byte buffer at %p is outside its registration", r->size, r->buf);
    r->desc = mr->desc;
    return SMD_TRANSPORT_OK;
  }
  if (!ctx->prov.mr_local || r->size == 0) return SMD_TRANSPORT_OK;
  int rc = register_region(ctx, reinterpret_cast<uintptr_t>(r->buf), r->size, &r->own_mr);
  if (rc != 0)
    return fail(ctx, status_of_fi_error(-rc),
                "efa: registering a %zu-byte buffer at %p with provider %s failed: %s", r->size,
                r->buf, ctx->prov.name.c_str(), fi_strerror(-rc));
  r->desc = fi_mr_desc(r->own_mr);
  return SMD_TRANSPORT_OK;
}

void drop_own_registration(Request *r) {
  if (r->own_mr == nullptr) return;
  fi_close(&r->own_mr->fid);
  r->own_mr = nullptr;
}

}  // namespace smd_efa
