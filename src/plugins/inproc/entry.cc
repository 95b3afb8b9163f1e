// The inproc transport: ranks that are threads of one process, for worlds
// of thousands of ranks in one test process (docs/SCALE.md). A message is
// one copy from the sender's buffer into the receiver's (or into its
// unexpected queue); no descriptors, no threads, nothing shared with other
// processes. It reaches nothing outside its process, so SMD_TRANSPORT=auto
// never picks it: name it with SMD_TRANSPORT=inproc.
#include <cstdio>
#include <cstring>
#include <mutex>
#include <unordered_set>

#include "guard.h"
#include "live_handle.h"
#include "mailbox.h"
#include "registry.h"
#include "trace.h"

using namespace smd_inproc;
using smd_plugin::fail;
using smd_plugin::fail_host;
using smd_plugin::guard;
using Status = smd_transport_status_t;

namespace {

constexpr uint32_t kContextMagic = 0x1a9c0c7c, kEndpointMagic = 0x1a9c0e9d;

struct Context {
  uint32_t magic = kContextMagic;
  const smd_transport_host_t *host = nullptr;
  int32_t rank = -1;
  std::shared_ptr<Mailbox> box = std::make_shared<Mailbox>();
  Address address{};
  // Requests handed out and not yet released: finalize frees them.
  std::mutex live_mu;
  std::unordered_set<Request *> live;

  Request *track(Request *r) {
    std::lock_guard<std::mutex> lock(live_mu);
    live.insert(r);
    return r;
  }
  void release(Request *r) {
    {
      std::lock_guard<std::mutex> lock(live_mu);
      live.erase(r);
    }
    delete r;
  }
};

struct Endpoint {
  uint32_t magic = kEndpointMagic;
  Context *ctx = nullptr;
  int32_t peer = -1;
  std::shared_ptr<Mailbox> box;  // the peer's
};

Context *as_context(void *p) { return smd_plugin::live_handle<Context>(p, kContextMagic); }

Endpoint *as_endpoint(Context *ctx, void *p) {
  auto *e = static_cast<Endpoint *>(p);
  return e != nullptr && e->magic == kEndpointMagic && e->ctx == ctx ? e : nullptr;
}

Request *as_request(void *p) { return smd_plugin::live_handle<Request>(p, Request::kMagic); }

Status inproc_init(const smd_transport_host_t *host, void **out) {
  if (Status st = smd_plugin::check_host(host, "inproc"); st != SMD_TRANSPORT_OK) return st;
  return guard(host, "inproc", "init", [&] {
    auto *ctx = new Context();
    ctx->host = host;
    ctx->rank = host->rank;
    ctx->address = register_mailbox(ctx->box);
    trace_to(smd_plugin::param(ctx, "SMD_INPROC_TRACE"));
    *out = ctx;
    return SMD_TRANSPORT_OK;
  });
}

Status inproc_finalize(void *c) {
  Context *ctx = as_context(c);
  if (ctx == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  unregister_mailbox(ctx->address.id);
  ctx->box->close();
  std::string trace_path;
  if (tracing() && !trace_flush(&trace_path))
    smd_plugin::log_line(ctx, SMD_TRANSPORT_LOG_WARN,
                         "inproc: could not append the message trace to SMD_INPROC_TRACE=%s",
                         trace_path.c_str());
  for (Request *r : ctx->live) delete r;
  ctx->magic = 0;
  delete ctx;
  return SMD_TRANSPORT_OK;
}

Status inproc_get_address(void *c, void *buf, size_t *size) {
  Context *ctx = as_context(c);
  if (ctx == nullptr || size == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  size_t cap = *size;
  *size = sizeof(Address);
  if (buf == nullptr || cap < sizeof(Address))
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "inproc: address needs %zu bytes", sizeof(Address));
  std::memcpy(buf, &ctx->address, sizeof(Address));
  return SMD_TRANSPORT_OK;
}

Status inproc_connect(void *c, int32_t peer, const void *address, size_t size, void **endpoint) {
  Context *ctx = as_context(c);
  if (ctx == nullptr || endpoint == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  Address a{};
  if (address == nullptr || size != sizeof a)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "inproc: rank %d's address has %zu bytes, not %zu",
                peer, size, sizeof a);
  std::memcpy(&a, address, sizeof a);
  if (!from_this_process(a))
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                "inproc: rank %d is not a thread of this process (pid %u); inproc reaches only "
                "ranks of one process",
                peer, a.pid);
  return guard(ctx->host, "inproc", "connect", [&] {
    std::shared_ptr<Mailbox> box = find_mailbox(a.id);
    if (!box) return fail(ctx, SMD_TRANSPORT_ERR_PEER, "inproc: rank %d's context is gone", peer);
    auto *ep = new Endpoint();
    ep->ctx = ctx;
    ep->peer = peer;
    ep->box = std::move(box);
    *endpoint = ep;
    return SMD_TRANSPORT_OK;
  });
}

Status inproc_disconnect(void *c, void *e) {
  Context *ctx = as_context(c);
  Endpoint *ep = ctx ? as_endpoint(ctx, e) : nullptr;
  if (ep == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  ep->magic = 0;
  delete ep;
  return SMD_TRANSPORT_OK;
}

// Any memory will do: copies are plain loads and stores in one process.
Status inproc_mem_register(void *c, void *, size_t, uint32_t, void **mr) {
  Context *ctx = as_context(c);
  if (ctx == nullptr || mr == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  *mr = ctx;
  return SMD_TRANSPORT_OK;
}

Status inproc_mem_deregister(void *c, void *) {
  return as_context(c) ? SMD_TRANSPORT_OK : SMD_TRANSPORT_ERR_INVALID;
}

// Runs body(ctx, ep) for isend and irecv once the handles are live, the
// request pointer given and the buffer there unless size is 0.
template <class Body>
Status with_transfer(void *c, void *e, const void *buf, size_t size, void **request,
                     const char *what, Body body) {
  Context *ctx = as_context(c);
  Endpoint *ep = ctx ? as_endpoint(ctx, e) : nullptr;
  if (ep == nullptr || request == nullptr || (size && buf == nullptr))
    return SMD_TRANSPORT_ERR_INVALID;
  return guard(ctx->host, "inproc", what, [&] { return body(ctx, ep); });
}

Status inproc_isend(void *c, void *e, const void *buf, size_t size, void *, uint64_t tag,
                    void **request) {
  return with_transfer(c, e, buf, size, request, "isend", [&](Context *ctx, Endpoint *ep) {
    uint64_t id = tracing() ? trace_send(ctx->rank, ep->peer, size) : 0;
    Status st = ep->box->deliver(ctx->rank, tag, buf, size, id);
    if (st == SMD_TRANSPORT_ERR_PEER)
      return fail(ctx, st, "inproc: rank %d's context is gone", ep->peer);
    auto *r = new Request();
    r->done = true;
    r->size = size;
    *request = ctx->track(r);
    return SMD_TRANSPORT_OK;
  });
}

Status inproc_irecv(void *c, void *e, void *buf, size_t size, void *, uint64_t tag,
                    void **request) {
  return with_transfer(c, e, buf, size, request, "irecv", [&](Context *ctx, Endpoint *ep) {
    auto *r = new Request();
    r->buf = buf;
    r->capacity = size;
    r->source = ep->peer;
    r->tag = tag;
    r->sender = ep->box;
    ctx->track(r);
    ctx->box->post(r);
    *request = r;
    return SMD_TRANSPORT_OK;
  });
}

Status inproc_test(void *c, void *q, int *done, size_t *size) {
  Context *ctx = as_context(c);
  Request *r = as_request(q);
  if (ctx == nullptr || r == nullptr || done == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  *done = ctx->box->finished(r) ? 1 : 0;
  if (!*done) return SMD_TRANSPORT_IN_PROGRESS;
  Status st = r->status;
  if (r->trace_id != 0) trace_receive(ctx->rank, r->trace_id);
  if (size) *size = r->size;
  int32_t source = r->source;
  ctx->release(r);
  if (st == SMD_TRANSPORT_ERR_PEER)
    return fail(ctx, st, "inproc: rank %d's context closed before its message came", source);
  if (st == SMD_TRANSPORT_ERR_TRUNCATED)
    return fail(ctx, st, "inproc: the message from rank %d is larger than the receive", source);
  return st;
}

Status inproc_cancel(void *c, void *q) {
  Context *ctx = as_context(c);
  Request *r = as_request(q);
  if (ctx == nullptr || r == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  ctx->box->cancel(r);
  ctx->release(r);
  return SMD_TRANSPORT_OK;
}

// Senders do all the work; there is nothing to drive.
Status inproc_progress(void *c) {
  Context *ctx = as_context(c);
  if (ctx == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  ctx->box->seen();
  return SMD_TRANSPORT_OK;
}

Status inproc_wait(void *c, int64_t timeout_us) {
  Context *ctx = as_context(c);
  if (ctx == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  ctx->box->wait(timeout_us);
  return SMD_TRANSPORT_OK;
}

Status inproc_check_peer(void *c, void *e) {
  Context *ctx = as_context(c);
  Endpoint *ep = ctx ? as_endpoint(ctx, e) : nullptr;
  if (ep == nullptr) return SMD_TRANSPORT_ERR_INVALID;
  if (ep->box->closed())
    return fail(ctx, SMD_TRANSPORT_ERR_PEER, "inproc: rank %d's context is gone", ep->peer);
  return SMD_TRANSPORT_OK;
}

// Never chosen by SMD_TRANSPORT=auto: other processes are out of reach.
int32_t inproc_probe(const smd_transport_host_t *, char *why, size_t why_size) {
  if (why && why_size)
    snprintf(why, why_size,
             "reaches only ranks that are threads of one process "
             "(SMD_TRANSPORT=inproc)");
  return -1;
}

const smd_transport_param_t kParams[] = {
    {"SMD_INPROC_TRACE", "string", "",
     "Append every message (sender, receiver, bytes) and every receive's completion, in each "
     "rank's order, to this file when the rank's context finalizes: smd-sim's schedule replay "
     "reads it."},
    {nullptr, nullptr, nullptr, nullptr}};

const smd_transport_v1_t kTable = {
    sizeof(smd_transport_v1_t),
    SMD_TRANSPORT_ABI_VERSION,
    "inproc",
    "ranks that are threads of one process: one copy per message",
    SMD_TRANSPORT_CAP_THREAD_SAFE | SMD_TRANSPORT_CAP_SINGLE_PROCESS,
    inproc_init,
    inproc_finalize,
    inproc_get_address,
    inproc_connect,
    inproc_disconnect,
    inproc_mem_register,
    inproc_mem_deregister,
    inproc_isend,
    inproc_irecv,
    inproc_test,
    inproc_cancel,
    inproc_progress,
    inproc_wait,
    inproc_check_peer,
    nullptr,  // mem_pack: no RMA
    nullptr,  // iget
    nullptr,  // segment_create: no segments (a node's arena would be per rank thread)
    nullptr,  // segment_attach
    nullptr,  // segment_release
    nullptr,  // context_caps
    inproc_probe,
    kParams,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const smd_transport_v1_t *smd_transport_plugin_v1(
    void) {
  return &kTable;
}
