// The life of a request: started on an endpoint, tied to at most one UCX
// operation, finished exactly once (by UCX's callback, at once, or by us
// when UCX cannot be waited for), released when the caller tests or
// cancels it.
#include <cstdio>

#include "context.h"

namespace smd_ucx {

// How long cancel() lets a receive that already matched a message finish:
// the sender is alive (it finishes) or dies (UCX then fails it), so this
// bounds only a stuck peer. Sends cannot be cancelled in UCX at all; they
// get a moment to finish locally, then UCX keeps them.
constexpr int64_t kCancelRecvNs = 5'000'000'000;
constexpr int64_t kCancelSendNs = 2'000'000;

static const char *kind_name(ReqKind k) {
  switch (k) {
    case ReqKind::kSend: return "send to";
    case ReqKind::kRecv: return "receive from";
    case ReqKind::kGet: return "read from";
  }
  return "request with";
}

Request *request_start(Context *ctx, Endpoint *ep, ReqKind kind, size_t size, uint64_t tag) {
  Request *r = ctx->pool.alloc(ctx);
  r->kind = kind;
  r->ep = ep;
  r->size = size;
  r->tag = tag;
  ep->pending.push(r);
  return r;
}

void request_finish(Context *ctx, Request *r, Status status, size_t bytes,
                    const std::string &error) {
  if (r->done) return;
  if (r->ep != nullptr) r->ep->pending.remove(r);
  r->ep = nullptr;
  r->done = true;
  r->status = status;
  r->bytes = bytes;
  r->error = error;
  ++ctx->completions;
}

// The status and explanation of a UCX operation that ended with s.
static Status judge(Request *r, ucs_status_t s, std::string *error) {
  if (s == UCS_OK) return SMD_TRANSPORT_OK;
  Endpoint *ep = r->ep;
  int peer = ep != nullptr ? ep->peer : -1;
  char text[400];
  if (s == UCS_ERR_MESSAGE_TRUNCATED) {
    snprintf(text, sizeof text,
             "ucx: the message from rank %d is larger than the %zu-byte "
             "receive buffer",
             peer, r->size);
    *error = text;
    return SMD_TRANSPORT_ERR_TRUNCATED;
  }
  if (ep != nullptr && !ep->failed && is_peer_failure(s)) peer_failed(r->ctx, ep, s);
  if (ep != nullptr && ep->failed) {
    *error = ep->death;
    return SMD_TRANSPORT_ERR_PEER;
  }
  if (s == UCS_ERR_CANCELED) {
    snprintf(text, sizeof text, "ucx: %s rank %d cancelled%s", kind_name(r->kind), peer,
             ep != nullptr && ep->closing ? " (endpoint disconnected)" : "");
    *error = text;
    return SMD_TRANSPORT_ERR_CANCELED;
  }
  snprintf(text, sizeof text, "ucx: %s rank %d failed: %s", kind_name(r->kind), peer,
           ucs_status_string(s));
  *error = text;
  return status_from_ucs(s);
}

static void ended(Request *r, ucs_status_t s, size_t bytes) {
  std::string error;
  Status st = judge(r, s, &error);
  request_finish(r->ctx, r, st, st == SMD_TRANSPORT_OK ? bytes : 0, error);
}

// UCX may call back before the starting call returns (a receive whose
// message is already here): then r->ucx is not set yet, and the UCX
// request is freed by request_attach once the call has returned.
static void release_ucx(Request *r, void *ucx_req) {
  if (r->ucx != ucx_req) return;
  r->ucx = nullptr;
  ucp_request_free(ucx_req);
}

void on_send_done(void *ucx_req, ucs_status_t status, void *user) {
  auto *r = static_cast<Request *>(user);
  release_ucx(r, ucx_req);
  ended(r, status, r->size);
}

void on_recv_done(void *ucx_req, ucs_status_t status, const ucp_tag_recv_info_t *info, void *user) {
  auto *r = static_cast<Request *>(user);
  size_t bytes = status == UCS_OK && info != nullptr ? info->length : 0;
  release_ucx(r, ucx_req);
  ended(r, status, bytes);
}

ucp_request_param_t send_params(Request *r) {
  ucp_request_param_t p;
  p.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_MEMORY_TYPE;
  p.cb.send = on_send_done;
  p.user_data = r;
  p.memory_type = UCS_MEMORY_TYPE_HOST;
  return p;
}

void request_attach(Context *, Request *r, ucs_status_ptr_t sp) {
  if (sp == nullptr) {
    ended(r, UCS_OK, r->size);
  } else if (UCS_PTR_IS_ERR(sp)) {
    ended(r, UCS_PTR_STATUS(sp), 0);
  } else if (r->done) {
    ucp_request_free(sp);  // it called back already
  } else {
    r->ucx = sp;
  }
}

void request_abandon(Context *, Request *r) {
  if (r->ucx == nullptr) return;
  // Freed while unfinished: UCX completes it on its own, without calling
  // back, and releases it then.
  ucp_request_free(r->ucx);
  r->ucx = nullptr;
}

Status request_test(Context *ctx, Request *r, int *done, size_t *size) {
  if (!r->done) progress(ctx);
  if (!r->done) {
    *done = 0;
    return SMD_TRANSPORT_IN_PROGRESS;
  }
  *done = 1;
  if (size != nullptr) *size = r->bytes;
  Status s = r->status;
  if (s != SMD_TRANSPORT_OK) fail(ctx, s, "%s", r->error.c_str());
  ctx->pool.release(r);
  return s;
}

Status request_cancel(Context *ctx, Request *r) {
  if (!r->done && r->ucx != nullptr) {
    // Completes a receive that matched nothing yet, at once.
    ucp_request_cancel(ctx->worker, r->ucx);
    int64_t limit = now_ns() + (r->kind == ReqKind::kRecv ? kCancelRecvNs : kCancelSendNs);
    while (!r->done && now_ns() < limit) progress(ctx);
  }
  if (!r->done) {
    Endpoint *ep = r->ep;
    log_line(ctx, SMD_TRANSPORT_LOG_TRACE,
             "ucx: a %zu-byte %s rank %d could not be cancelled; UCX keeps "
             "it until it completes or the endpoint closes",
             r->size, kind_name(r->kind), ep != nullptr ? ep->peer : -1);
    request_abandon(ctx, r);
    request_finish(ctx, r, SMD_TRANSPORT_ERR_CANCELED, 0, "ucx: cancelled");
  }
  ctx->pool.release(r);
  return SMD_TRANSPORT_OK;
}

}  // namespace smd_ucx
