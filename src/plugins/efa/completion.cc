// The completion queue: every operation's end, successful or not
// (fi_cq_readerr), and the life of a request around it. A request is
// finished for the caller (request_finish) and given back by the provider
// (its completion) separately; its slot is free once both happened and
// the caller has let go.
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "context.h"

namespace smd_efa {

namespace {

constexpr size_t kBatch = 32;

Request *request_of(void *op_context) {
  auto *r = static_cast<Request *>(op_context);
  if (r == nullptr) return nullptr;
  return r->magic == kRequestLive || r->magic == kRequestAbandoned ? r : nullptr;
}

// The slot goes back to the pool with whatever it held.
void request_free(Context *ctx, Request *r) {
  drop_own_registration(r);
  frame_release(ctx, r);
  ctx->pool.release(r);
}

void given_back(Context *ctx, Request *r) {
  if (!r->posted) return;
  r->posted = false;
  --ctx->owned;
  Endpoint *ep = r->ep;
  if (--ep->owned == 0 && ep->disconnected) ctx->reap = true;
}

// The provider gives r back with this outcome.
void returned(Context *ctx, Request *r, Status status, size_t bytes) {
  given_back(ctx, r);
  drop_own_registration(r);
  if (r->state != ReqState::kDone) {
    if (status == SMD_TRANSPORT_ERR_CANCELED && r->stopping != SMD_TRANSPORT_OK)
      status = r->stopping;
    request_finish(ctx, r, status, bytes);
  }
  if (r->abandoned) {
    r->abandoned = false;
    request_free(ctx, r);
  }
}

void completed(Context *ctx, const struct fi_cq_tagged_entry &e) {
  Request *r = request_of(e.op_context);
  if (r == nullptr) return;  // an operation without our context: none is posted
  // Framed: the next part of a message, or a frame on a stream.
  if (ctx->prov.framed && !r->abandoned && r->kind != ReqKind::kGet &&
      (r->kind == ReqKind::kStream || r->state != ReqState::kDone)) {
    given_back(ctx, r);
    frame_completed(ctx, r, e.len);
    return;
  }
  size_t bytes = r->kind == ReqKind::kRecv ? e.len : r->size;
  returned(ctx, r, SMD_TRANSPORT_OK, bytes);
}

void failed(Context *ctx) {
  struct fi_cq_err_entry err;
  memset(&err, 0, sizeof err);
  if (fi_cq_readerr(ctx->cq, &err, 0) < 0) return;
  Request *r = request_of(err.op_context);
  char detail_buf[200] = "";
  const char *detail =
      fi_cq_strerror(ctx->cq, err.prov_errno, err.err_data, detail_buf, sizeof detail_buf);
  if (detail == nullptr) detail = "";
  if (r == nullptr) {
    log_line(ctx, SMD_TRANSPORT_LOG_WARN, "efa: an error completion without a request: %s (%s)",
             fi_strerror(err.err), detail);
    return;
  }
  Endpoint *ep = r->ep;
  int code = err.err < 0 ? -err.err : err.err;  // shm reports -FI_ETRUNC
  Status status = status_of_fi_error(code);
  char text[400];
  size_t bytes = 0;
  if (code == FI_ETRUNC) {
    bytes = std::min(err.len, r->size);
    snprintf(text, sizeof text,
             "efa: a message of %zu B from rank %d does not fit the %zu-byte "
             "receive",
             err.len + err.olen, ep->peer, r->size);
  } else if (code == FI_ECANCELED) {
    snprintf(text, sizeof text, "efa: %s rank %d cancelled", op_text(r->kind), ep->peer);
  } else if (is_peer_error(code)) {
    snprintf(text, sizeof text, "efa peer rank %d: %s (%s)", ep->peer, fi_strerror(code), detail);
  } else {
    snprintf(text, sizeof text, "efa: %s rank %d (%zu B) failed: %s (%s)", op_text(r->kind),
             ep->peer, r->size, fi_strerror(code), detail);
  }
  if (r->state != ReqState::kDone && r->error.empty()) r->error = text;
  returned(ctx, r, status, bytes);
  // The provider gave up on the peer: so do its other requests.
  if (is_peer_error(code) && !ep->disconnected) endpoint_fail(ctx, ep, text);
}

}  // namespace

size_t drain_cq(Context *ctx, int max_batches) {
  struct fi_cq_tagged_entry entries[kBatch];
  size_t handled = 0;
  for (int b = 0; b < max_batches; ++b) {
    ssize_t n = fi_cq_read(ctx->cq, entries, kBatch);
    if (n > 0) {
      for (ssize_t i = 0; i < n; ++i) completed(ctx, entries[i]);
      handled += size_t(n);
      continue;
    }
    if (n == -FI_EAVAIL) {
      failed(ctx);
      ++handled;
      continue;
    }
    if (n != -FI_EAGAIN)
      log_line(ctx, SMD_TRANSPORT_LOG_WARN, "efa: fi_cq_read: %s", fi_strerror(int(-n)));
    break;
  }
  return handled;
}

void request_finish(Context *ctx, Request *r, Status status, size_t bytes) {
  r->ep->pending.remove(r);
  r->state = ReqState::kDone;
  r->status = status;
  r->bytes = bytes;
  --ctx->unfinished;
  ++ctx->events;
  if (!r->posted) drop_own_registration(r);
}

void request_release(Context *ctx, Request *r) {
  if (r->posted) {
    r->abandoned = true;
    r->magic = kRequestAbandoned;
    return;
  }
  request_free(ctx, r);
}

}  // namespace smd_efa
