// The exported v1 table. Each entry checks its handles, catches every C++
// exception (none may cross the C ABI) and calls into the implementation.
#include "context.h"
#include "guard.h"
#include "live_handle.h"

using namespace smd_shm;
using smd_plugin::guard;

namespace {

Context *as_context(void *p) { return smd_plugin::live_handle<Context>(p, kContextMagic); }

// Runs body() with exceptions turned into statuses.
template <class F>
Status guarded(Context *ctx, const char *what, F body) {
  return guard(ctx->host, "shm", what, body);
}

// Runs body(ctx, ep) after checking both handles.
template <class F>
Status with_endpoint(void *c, void *e, const char *what, F body) {
  Context *ctx = as_context(c);
  if (ctx == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  auto *ep = static_cast<Endpoint *>(e);
  if (ep == nullptr || ep->magic != kEndpointMagic || ep->ctx != ctx)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "shm: %s: invalid endpoint", what);
  return guarded(ctx, what, [&] { return body(ctx, ep); });
}

Request *as_request(Context *ctx, void *p) {
  auto *r = static_cast<Request *>(p);
  return r != nullptr && r->magic == kRequestLive && ctx->pool.find(r->id()) == r ? r : nullptr;
}

Status shm_init(const smd_transport_host_t *host, void **ctx) {
  return guard(host, "shm", "init", [&] { return context_init(host, ctx); });
}

Status shm_finalize(void *c) {
  Context *ctx = as_context(c);
  if (ctx == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  return guarded(ctx, "finalize", [&] { return context_finalize(ctx); });
}

Status shm_get_address(void *c, void *buf, size_t *size) {
  Context *ctx = as_context(c);
  if (ctx == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  return context_address(ctx, buf, size);
}

Status shm_connect(void *c, int32_t peer, const void *address, size_t size, void **endpoint) {
  Context *ctx = as_context(c);
  if (ctx == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  return guarded(ctx, "connect",
                 [&] { return endpoint_connect(ctx, peer, address, size, endpoint); });
}

Status shm_disconnect(void *c, void *e) {
  return with_endpoint(c, e, "disconnect",
                       [](Context *ctx, Endpoint *ep) { return endpoint_disconnect(ctx, ep); });
}

Status shm_mem_register(void *c, void *ptr, size_t size, uint32_t, void **mr) {
  Context *ctx = as_context(c);
  if (ctx == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  return guarded(ctx, "mem_register", [&] { return rma_register(ctx, ptr, size, mr); });
}

Status shm_mem_deregister(void *c, void *mr) {
  Context *ctx = as_context(c);
  if (ctx == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  return guarded(ctx, "mem_deregister", [&] { return rma_deregister(ctx, mr); });
}

Status shm_isend(void *c, void *e, const void *buf, size_t size, void *, uint64_t tag,
                 void **request) {
  return with_endpoint(c, e, "isend", [&](Context *ctx, Endpoint *ep) {
    if (request == nullptr || (buf == nullptr && size != 0))
      return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "shm: isend: %s is NULL",
                  request ? "buf" : "request");
    return send_start(ctx, ep, buf, size, tag, request);
  });
}

Status shm_irecv(void *c, void *e, void *buf, size_t size, void *, uint64_t tag, void **request) {
  return with_endpoint(c, e, "irecv", [&](Context *ctx, Endpoint *ep) {
    if (request == nullptr || (buf == nullptr && size != 0))
      return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "shm: irecv: %s is NULL",
                  request ? "buf" : "request");
    return recv_start(ctx, ep, buf, size, tag, request);
  });
}

Status shm_test(void *c, void *request, int *done, size_t *size) {
  Context *ctx = as_context(c);
  if (ctx == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  return guarded(ctx, "test", [&] {
    Request *r = as_request(ctx, request);
    if (r == nullptr || done == nullptr)
      return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "shm: test: %s",
                  r ? "done is NULL" : "not a live request");
    if (r->phase != Phase::kDone) progress(ctx);
    if (r->phase != Phase::kDone) {
      *done = 0;
      return SMD_TRANSPORT_IN_PROGRESS;
    }
    *done = 1;
    if (size != nullptr) *size = size_t(r->bytes);
    Status s = r->status;
    if (s != SMD_TRANSPORT_OK) fail(ctx, s, "%s", r->error.c_str());
    ctx->pool.release(r);
    return s;
  });
}

Status shm_cancel(void *c, void *request) {
  Context *ctx = as_context(c);
  if (ctx == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  return guarded(ctx, "cancel", [&] {
    Request *r = as_request(ctx, request);
    if (r == nullptr)
      return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "shm: cancel: not a live request");
    if (r->phase != Phase::kDone) {
      request_unlink(ctx, r);
      request_complete(ctx, r, SMD_TRANSPORT_ERR_CANCELED, 0);
    }
    ctx->pool.release(r);
    return SMD_TRANSPORT_OK;
  });
}

Status shm_progress(void *c) {
  Context *ctx = as_context(c);
  if (ctx == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  return guarded(ctx, "progress", [&] {
    progress(ctx);
    return SMD_TRANSPORT_OK;
  });
}

Status shm_wait(void *c, int64_t timeout_us) {
  Context *ctx = as_context(c);
  if (ctx == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  return guarded(ctx, "wait", [&] { return wait_for_work(ctx, timeout_us); });
}

Status shm_check_peer(void *c, void *e) {
  return with_endpoint(c, e, "check_peer", [](Context *ctx, Endpoint *ep) {
    if (!liveness_check(ctx, ep)) return SMD_TRANSPORT_OK;
    return fail(ctx, SMD_TRANSPORT_ERR_PEER, "%s", ep->death.c_str());
  });
}

Status shm_mem_pack(void *c, void *mr, void *buf, size_t *size) {
  Context *ctx = as_context(c);
  if (ctx == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  return guarded(ctx, "mem_pack", [&] { return rma_pack(ctx, mr, buf, size); });
}

Status shm_iget(void *c, void *e, void *local, void *, uint64_t remote, const void *rkey,
                size_t rkey_size, size_t size, void **request) {
  return with_endpoint(c, e, "iget", [&](Context *ctx, Endpoint *ep) {
    if (request == nullptr)
      return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "shm: iget: request is NULL");
    return rma_get(ctx, ep, local, remote, rkey, rkey_size, size, request);
  });
}

Status shm_segment_create(void *c, size_t size, void **ptr, void **segment, void *handle,
                          size_t *handle_size) {
  Context *ctx = as_context(c);
  if (ctx == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  return guarded(ctx, "segment_create",
                 [&] { return segment_create(ctx, size, ptr, segment, handle, handle_size); });
}

Status shm_segment_attach(void *c, void *e, const void *handle, size_t handle_size, void **ptr,
                          size_t *size, void **segment) {
  return with_endpoint(c, e, "segment_attach", [&](Context *ctx, Endpoint *ep) {
    return segment_attach(ctx, ep, handle, handle_size, ptr, size, segment);
  });
}

Status shm_segment_release(void *c, void *segment) {
  Context *ctx = as_context(c);
  if (ctx == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  return guarded(ctx, "segment_release",
                 [&] { return segment_release(ctx, static_cast<Segment *>(segment)); });
}

// The variables read_params() reads (context.cc).
const smd_transport_param_t kParams[] = {
    {"SMD_SHM_CMA", "bool", "1",
     "Let the shm transport copy directly between processes with cross-memory attach "
     "(process_vm_readv)."},
    {"SMD_SHM_EAGER_LIMIT", "int", "32704",
     "Largest message the shm transport copies through its rings; larger ones go by "
     "cross-memory attach."},
    {nullptr, nullptr, nullptr, nullptr},
};

const smd_transport_v1_t kTable = {
    sizeof(smd_transport_v1_t),
    SMD_TRANSPORT_ABI_VERSION,
    "shm",
    "shared memory within a node: memfd rings, CMA for large messages",
    SMD_TRANSPORT_CAP_INTRA_NODE_ONLY | SMD_TRANSPORT_CAP_RMA | SMD_TRANSPORT_CAP_RMA_ANY_ADDRESS |
        SMD_TRANSPORT_CAP_SEGMENTS,
    shm_init,
    shm_finalize,
    shm_get_address,
    shm_connect,
    shm_disconnect,
    shm_mem_register,
    shm_mem_deregister,
    shm_isend,
    shm_irecv,
    shm_test,
    shm_cancel,
    shm_progress,
    shm_wait,
    shm_check_peer,
    shm_mem_pack,
    shm_iget,
    shm_segment_create,
    shm_segment_attach,
    shm_segment_release,
    nullptr,  // context_caps: the caps above hold everywhere
    nullptr,  // probe: never a network plugin (INTRA_NODE_ONLY)
    kParams,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const smd_transport_v1_t *smd_transport_plugin_v1(
    void) {
  return &kTable;
}
