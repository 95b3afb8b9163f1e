// The exported v1 table. Each entry checks its handles, catches every C++
// exception (none may cross the C ABI) and calls into the implementation.
#include "context.h"
#include "guard.h"
#include "live_handle.h"

using namespace smd_efa;

namespace {

Context *as_context(void *p) { return smd_plugin::live_handle<Context>(p, kContextMagic); }

template <class F>
Status with_context(void *c, const char *what, F body) {
  return smd_plugin::with_live_context<Context>(c, kContextMagic, "efa", what, body);
}

// Runs body(ctx, ep) after checking both handles.
template <class F>
Status with_endpoint(void *c, void *e, const char *what, F body) {
  return with_context(c, what, [&](Context *ctx) {
    auto *ep = static_cast<Endpoint *>(e);
    if (ep == nullptr || ep->magic != kEndpointMagic || ep->ctx != ctx || ep->disconnected)
      return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "efa: %s: invalid endpoint", what);
    return body(ctx, ep);
  });
}

Request *as_request(void *p) { return smd_plugin::live_handle<Request>(p, kRequestLive); }

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

Status efa_init(const smd_transport_host_t *host, void **ctx) {
  return smd_plugin::guard(host, "efa", "init", [&] { return context_init(host, ctx); });
}

Status efa_finalize(void *c) {
  return with_context(c, "finalize", [](Context *ctx) { return context_finalize(ctx); });
}

Status efa_get_address(void *c, void *buf, size_t *size) {
  return with_context(c, "get_address",
                      [&](Context *ctx) { return context_address(ctx, buf, size); });
}

Status efa_connect(void *c, int32_t peer, const void *address, size_t size, void **endpoint) {
  return with_context(c, "connect", [&](Context *ctx) {
    return endpoint_connect(ctx, peer, address, size, endpoint);
  });
}

Status efa_disconnect(void *c, void *e) {
  return with_endpoint(c, e, "disconnect",
                       [](Context *ctx, Endpoint *ep) { return endpoint_disconnect(ctx, ep); });
}

Status efa_mem_register(void *c, void *ptr, size_t size, uint32_t, void **mr) {
  return with_context(c, "mem_register",
                      [&](Context *ctx) { return mem_register(ctx, ptr, size, mr); });
}

Status efa_mem_deregister(void *c, void *mr) {
  return with_context(c, "mem_deregister", [&](Context *ctx) {
    return mem_deregister(ctx, static_cast<Registration *>(mr));
  });
}

Status efa_isend(void *c, void *e, const void *buf, size_t size, void *mr, uint64_t tag,
                 void **request) {
  return with_endpoint(c, e, "isend", [&](Context *ctx, Endpoint *ep) {
    Registration *reg = nullptr;
    if (Status s = check_transfer(ctx, "isend", buf, size, mr, request, &reg)) return s;
    return start_send(ctx, ep, buf, size, reg, tag, request);
  });
}

Status efa_irecv(void *c, void *e, void *buf, size_t size, void *mr, uint64_t tag, void **request) {
  return with_endpoint(c, e, "irecv", [&](Context *ctx, Endpoint *ep) {
    Registration *reg = nullptr;
    if (Status s = check_transfer(ctx, "irecv", buf, size, mr, request, &reg)) return s;
    return start_recv(ctx, ep, buf, size, reg, tag, request);
  });
}

Status efa_test(void *c, void *request, int *done, size_t *size) {
  return with_context(c, "test", [&](Context *ctx) {
    Request *r = as_request(request);
    if (r == nullptr || done == nullptr)
      return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "efa: test: %s",
                  r ? "done is NULL" : "not a live request");
    if (r->state != ReqState::kDone) progress(ctx);
    if (r->state != ReqState::kDone) {
      *done = 0;
      return SMD_TRANSPORT_IN_PROGRESS;
    }
    *done = 1;
    if (size != nullptr) *size = r->bytes;
    Status s = r->status;
    if (s != SMD_TRANSPORT_OK) fail(ctx, s, "%s", r->error.c_str());
    request_release(ctx, r);
    return s;
  });
}

Status efa_cancel(void *c, void *request) {
  return with_context(c, "cancel", [&](Context *ctx) {
    Request *r = as_request(request);
    if (r == nullptr)
      return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "efa: cancel: not a live request");
    return request_cancel(ctx, r);
  });
}

Status efa_progress(void *c) {
  return with_context(c, "progress", [](Context *ctx) {
    progress(ctx);
    return SMD_TRANSPORT_OK;
  });
}

Status efa_wait(void *c, int64_t timeout_us) {
  return with_context(c, "wait", [&](Context *ctx) { return wait_for_work(ctx, timeout_us); });
}

Status efa_check_peer(void *c, void *e) {
  return with_endpoint(c, e, "check_peer", [](Context *ctx, Endpoint *ep) {
    if (!ep->dead) liveness_tick(ctx, true);
    if (!ep->dead) return SMD_TRANSPORT_OK;
    return fail(ctx, SMD_TRANSPORT_ERR_PEER, "%s", ep->death.c_str());
  });
}

Status efa_mem_pack(void *c, void *mr, void *buf, size_t *size) {
  return with_context(c, "mem_pack", [&](Context *ctx) {
    return mem_pack(ctx, static_cast<Registration *>(mr), buf, size);
  });
}

Status efa_iget(void *c, void *e, void *local, void *local_mr, uint64_t remote, const void *rkey,
                size_t rkey_size, size_t size, void **request) {
  return with_endpoint(c, e, "iget", [&](Context *ctx, Endpoint *ep) {
    bool bad = false;
    Registration *reg = as_registration(local_mr, &bad);
    if (request == nullptr || bad)
      return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "efa: iget: %s",
                  bad ? "local_mr is not a registration" : "request is NULL");
    return mem_get(ctx, ep, local, reg, remote, rkey, rkey_size, size, request);
  });
}

int32_t efa_probe(const smd_transport_host_t *host, char *why, size_t why_size) {
  if (host == nullptr || why == nullptr || why_size == 0) return 0;
  return probe_machine(host, why, why_size);
}

// A provider that needs local descriptors needs every buffer registered:
// the core then registers them through its registration cache.
uint64_t efa_context_caps(void *c) {
  Context *ctx = as_context(c);
  return ctx != nullptr && ctx->prov.mr_local ? SMD_TRANSPORT_CAP_REGISTRATION_REQUIRED : 0;
}

const smd_transport_v1_t kTable = {
    sizeof(smd_transport_v1_t),
    SMD_TRANSPORT_ABI_VERSION,
    "efa",
    "libfabric reliable datagrams (efa; or tcp, shm... by SMD_EFA_PROVIDER)",
    SMD_TRANSPORT_CAP_RMA,
    efa_init,
    efa_finalize,
    efa_get_address,
    efa_connect,
    efa_disconnect,
    efa_mem_register,
    efa_mem_deregister,
    efa_isend,
    efa_irecv,
    efa_test,
    efa_cancel,
    efa_progress,
    efa_wait,
    efa_check_peer,
    efa_mem_pack,
    efa_iget,
    nullptr,  // segment_create: no shared segments
    nullptr,  // segment_attach
    nullptr,  // segment_release
    efa_context_caps,
    efa_probe,
    kParams,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const smd_transport_v1_t *smd_transport_plugin_v1(
    void) {
  return &kTable;
}
