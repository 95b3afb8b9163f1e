// One-sided reads. mem_pack publishes a registration as a small header
// (the registered range) plus UCX's packed remote key; iget checks the
// range, unpacks the key once per endpoint, and issues ucp_get_nbx. On
// transports without RDMA (tcp, here) UCX emulates the read with active
// messages, which the target serves while it progresses.
#include <cstring>
#include <string>

#include "context.h"
#include "remote_range.h"

namespace smd_ucx {

using smd_plugin::check_remote_range;

struct KeyHeader {
  uint64_t magic;
  uint64_t base;  // the registered range [base, base + length)
  uint64_t length;
  uint32_t packed_length;  // bytes of UCX remote key that follow
  uint32_t reserved;
};
constexpr uint64_t kKeyMagic = 0x59454b5244444d53ull;  // "SMDDRKEY"

// Unpacked keys an endpoint keeps before it starts over (when no read is
// in flight on it).
constexpr size_t kMaxKeysPerEndpoint = 1024;

static Status packed_key(Context *ctx, Region *region, std::string *error) {
  if (region == nullptr || !region->packed.empty()) return SMD_TRANSPORT_OK;
  void *buf = nullptr;
  size_t size = 0;
  ucs_status_t s = ucp_rkey_pack(ctx->ucp, static_cast<ucp_mem_h>(region->handle), &buf, &size);
  if (s != UCS_OK) {
    *error = std::string("ucx: ucp_rkey_pack failed: ") + ucs_status_string(s);
    return SMD_TRANSPORT_ERR_SYSTEM;
  }
  auto *bytes = static_cast<unsigned char *>(buf);
  region->packed.assign(bytes, bytes + size);
  ucp_rkey_buffer_release(buf);
  return SMD_TRANSPORT_OK;
}

Status mem_pack(Context *ctx, void *mr, void *buf, size_t *size) {
  auto *g = static_cast<Registration *>(mr);
  if (ctx->registrations.count(g) == 0 || size == nullptr)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "ucx: mem_pack: %s",
                size ? "unknown registration" : "size is NULL");
  std::string error;
  if (Status s = packed_key(ctx, g->region, &error)) return fail(ctx, s, "%s", error.c_str());
  size_t packed = g->region != nullptr ? g->region->packed.size() : 0;
  size_t need = sizeof(KeyHeader) + packed;
  if (buf == nullptr || *size < need) {
    size_t had = buf ? *size : 0;
    *size = need;
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "ucx: remote key buffer of %zu bytes, need %zu",
                had, need);
  }
  KeyHeader h;
  memset(&h, 0, sizeof h);
  h.magic = kKeyMagic;
  h.base = g->ptr;
  h.length = g->size;
  h.packed_length = uint32_t(packed);
  memcpy(buf, &h, sizeof h);
  if (packed != 0)
    memcpy(static_cast<unsigned char *>(buf) + sizeof h, g->region->packed.data(), packed);
  *size = need;
  return SMD_TRANSPORT_OK;
}

void rkeys_release(Endpoint *ep) {
  for (auto &entry : ep->rkeys)
    if (entry.second.rkey != nullptr) ucp_rkey_destroy(entry.second.rkey);
  ep->rkeys.clear();
}

static bool reads_in_flight(Endpoint *ep) {
  for (Request *r = ep->pending.head; r != nullptr; r = r->next)
    if (r->kind == ReqKind::kGet) return true;
  return false;
}

// The endpoint's unpacked copy of a peer's key.
static Status unpack(Context *ctx, Endpoint *ep, const unsigned char *packed, size_t length,
                     ucp_rkey_h *out) {
  std::string id(reinterpret_cast<const char *>(packed), length);
  auto it = ep->rkeys.find(id);
  if (it != ep->rkeys.end()) {
    *out = it->second.rkey;
    return SMD_TRANSPORT_OK;
  }
  if (ep->rkeys.size() >= kMaxKeysPerEndpoint && !reads_in_flight(ep)) rkeys_release(ep);
  RemoteKey k;
  ucs_status_t s = ucp_ep_rkey_unpack(ep->ep, packed, &k.rkey);
  if (s != UCS_OK)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "ucx: iget: cannot unpack rank %d's remote key: %s",
                ep->peer, ucs_status_string(s));
  ep->rkeys.emplace(std::move(id), k);
  *out = k.rkey;
  return SMD_TRANSPORT_OK;
}

Status rma_get(Context *ctx, Endpoint *ep, void *local, uint64_t remote, const void *rkey,
               size_t rkey_size, size_t size, void **request) {
  *request = nullptr;
  if (rkey == nullptr)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                "ucx: iget needs the remote key of a registration (this "
                "plugin cannot read arbitrary addresses)");
  KeyHeader h;
  if (rkey_size < sizeof h)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                "ucx: iget: remote key of %zu bytes is shorter than its header", rkey_size);
  memcpy(&h, rkey, sizeof h);
  if (h.magic != kKeyMagic || rkey_size != sizeof h + h.packed_length)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "ucx: iget: not a ucx remote key (%zu bytes)",
                rkey_size);
  if (Status st = check_remote_range(ctx, "ucx: iget", remote, size, h.base, h.length, ep->peer);
      st != SMD_TRANSPORT_OK)
    return st;
  if (local == nullptr && size != 0)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "ucx: iget: local is NULL");
  if (size == 0) return SMD_TRANSPORT_OK;
  if (ep->failed) return fail(ctx, SMD_TRANSPORT_ERR_PEER, "%s", ep->death.c_str());
  ucp_rkey_h key = nullptr;
  if (Status s = unpack(ctx, ep, static_cast<const unsigned char *>(rkey) + sizeof h,
                        h.packed_length, &key))
    return s;
  Request *r = request_start(ctx, ep, ReqKind::kGet, size, 0);
  ucp_request_param_t p = send_params(r);
  request_attach(ctx, r, ucp_get_nbx(ep->ep, local, size, remote, key, &p));
  if (r->done) {
    // Finished inside the call: no request to hand out.
    Status s = r->status;
    std::string error = r->error;
    ctx->pool.release(r);
    if (s != SMD_TRANSPORT_OK) return fail(ctx, s, "%s", error.c_str());
    return SMD_TRANSPORT_OK;
  }
  *request = r;
  return SMD_TRANSPORT_OK;
}

}  // namespace smd_ucx
