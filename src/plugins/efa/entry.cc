// The exported v1 table: the entries every plugin shares come from
// entry_table.h; efa's own check its registrations and its requests.
#include "context.h"
#include "entry_table.h"

using namespace smd_efa;
using smd_plugin::with_context;
using smd_plugin::with_endpoint;

namespace {

// A registration handle, or nullptr for "none"; *bad when it is not one.
Registration *as_registration(void *p, bool *bad) {
  auto *r = static_cast<Registration *>(p);
  *bad = r != nullptr && r->magic != kRegistrationMagic;
  return *bad ? nullptr : r;
}

// isend's and irecv's arguments: a request pointer, a buffer unless the
// size is 0, and mr a registration or none (*reg, nullptr for none).
Status check_transfer(Context *ctx, const char *op, const void *buf, size_t size, void *mr,
                      void **request, Registration **reg) {
  bool bad = false;
  *reg = as_registration(mr, &bad);
  if (request == nullptr || (buf == nullptr && size != 0) || bad)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "efa: %s: %s", op,
                bad       ? "mr is not a registration"
                : request ? "buf is NULL"
                          : "request is NULL");
  return SMD_TRANSPORT_OK;
}

struct Efa : smd_plugin::PluginTraits<Context, kContextMagic, Endpoint, kEndpointMagic> {
  static constexpr const char *kName = "efa";
  static constexpr const char *kDescription =
      "libfabric reliable datagrams (efa; or tcp, shm... by SMD_EFA_PROVIDER)";
  static constexpr uint64_t kCaps = SMD_TRANSPORT_CAP_RMA;
  static constexpr const smd_transport_param_t *kParams = smd_efa::kParams;
  static constexpr auto context_init = smd_efa::context_init;

  // A disconnected endpoint stays until the provider is done with it
  // (endpoint_reap); no call may use it meanwhile.
  static bool endpoint_closed(const Endpoint *ep) { return ep->disconnected; }

  static bool peer_dead(Context *ctx, Endpoint *ep) {
    if (!ep->dead) liveness_tick(ctx, true);
    return ep->dead;
  }

  static Request *find_request(Context *, void *p) {
    return smd_plugin::live_handle<Request>(p, kRequestLive);
  }
  static bool finished(const Request *r) { return r->state == ReqState::kDone; }
  static void release(Context *ctx, Request *r) { request_release(ctx, r); }
  static constexpr auto test = smd_plugin::test_after_progress<Efa>;

  static Status isend(void *c, void *e, const void *buf, size_t size, void *mr, uint64_t tag,
                      void **request) {
    return with_endpoint<Efa>(c, e, "isend", [&](Context *ctx, Endpoint *ep) {
      Registration *reg = nullptr;
      if (Status s = check_transfer(ctx, "isend", buf, size, mr, request, &reg)) return s;
      return start_send(ctx, ep, buf, size, reg, tag, request);
    });
  }

  static Status irecv(void *c, void *e, void *buf, size_t size, void *mr, uint64_t tag,
                      void **request) {
    return with_endpoint<Efa>(c, e, "irecv", [&](Context *ctx, Endpoint *ep) {
      Registration *reg = nullptr;
      if (Status s = check_transfer(ctx, "irecv", buf, size, mr, request, &reg)) return s;
      return start_recv(ctx, ep, buf, size, reg, tag, request);
    });
  }

  static Status cancel(void *c, void *request) {
    return with_context<Efa>(c, "cancel", [&](Context *ctx) {
      Request *r = find_request(ctx, request);
      if (r == nullptr)
        return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "efa: cancel: not a live request");
      return request_cancel(ctx, r);
    });
  }

  static Status iget(void *c, void *e, void *local, void *local_mr, uint64_t remote,
                     const void *rkey, size_t rkey_size, size_t size, void **request) {
    return with_endpoint<Efa>(c, e, "iget", [&](Context *ctx, Endpoint *ep) {
      bool bad = false;
      Registration *reg = as_registration(local_mr, &bad);
      if (request == nullptr || bad)
        return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "efa: iget: %s",
                    bad ? "local_mr is not a registration" : "request is NULL");
      return mem_get(ctx, ep, local, reg, remote, rkey, rkey_size, size, request);
    });
  }

  // A provider that needs local descriptors needs every buffer registered:
  // the core then registers them through its registration cache.
  static uint64_t context_caps(void *c) {
    Context *ctx = smd_plugin::live_handle<Context>(c, kContextMagic);
    return ctx != nullptr && ctx->prov.mr_local ? SMD_TRANSPORT_CAP_REGISTRATION_REQUIRED : 0;
  }

  static int32_t probe(const smd_transport_host_t *host, char *why, size_t why_size) {
    if (host == nullptr || why == nullptr || why_size == 0) return 0;
    return probe_machine(host, why, why_size);
  }
};

constexpr smd_transport_v1_t kTable = smd_plugin::v1_table<Efa>();

}  // namespace

extern "C" __attribute__((visibility("default"))) const smd_transport_v1_t *smd_transport_plugin_v1(
    void) {
  return &kTable;
}
