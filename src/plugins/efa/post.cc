// Starting operations. A request goes to the provider at once unless
// its endpoint's queue already holds earlier ones (same-tag messages must
// leave in order); when the provider answers -FI_EAGAIN (its queues are
// full, or a connection is still being made) it waits in the queue, and
// progress posts it later. isend/irecv/iget never block.
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <algorithm>
#include <cstdio>

#include "context.h"

namespace smd_efa {

namespace {

Request *new_request(Context *ctx, Endpoint *ep, ReqKind kind, void *buf, size_t size,
                     uint64_t tag) {
  Request *r = ctx->pool.alloc();
  r->kind = kind;
  r->ep = ep;
  r->buf = buf;
  r->size = size;
  r->tag = tag;
  r->state = ReqState::kQueued;
  ep->pending.push(r);
  ++ctx->unfinished;
  return r;
}

// Undoes new_request for a request the caller never saw.
void discard(Context *ctx, Request *r) {
  r->ep->pending.remove(r);
  --ctx->unfinished;
  r->state = ReqState::kDone;
  request_release(ctx, r);
}

bool injectable(const Context *ctx, const Request *r) {
  return r->kind == ReqKind::kSend && !ctx->prov.framed && ctx->prov.inject_size > 0 &&
         r->size <= ctx->prov.inject_size;
}

// One attempt: 0 (posted, or injected and finished), -FI_EAGAIN, or an
// error.
ssize_t attempt(Context *ctx, Request *r) {
  Endpoint *ep = r->ep;
  ssize_t rc = 0;
  switch (r->kind) {
    case ReqKind::kSend:
      if (ctx->prov.framed) return frame_send(ctx, r);  // marks what it posts
      if (injectable(ctx, r)) {
        rc = fi_tinject(ctx->ep, r->buf, r->size, ep->addr, r->tag);
        if (rc == 0) request_finish(ctx, r, SMD_TRANSPORT_OK, r->size);
        return rc;
      }
      rc = fi_tsend(ctx->ep, r->buf, r->size, r->desc, ep->addr, r->tag, &r->fi);
      break;
    case ReqKind::kRecv:
      if (ctx->prov.framed) {
        rc = frame_part_recv(ctx, r);
        break;
      }
      rc = fi_trecv(ctx->ep, r->buf, r->size, r->desc,
                    ctx->prov.directed_recv ? ep->addr : FI_ADDR_UNSPEC, r->tag, 0, &r->fi);
      break;
    case ReqKind::kStream: rc = frame_part_recv(ctx, r); break;
    case ReqKind::kGet:
      rc = fi_read(ctx->ep, r->buf, r->size, r->desc, ep->addr, r->remote, r->key, &r->fi);
      break;
  }
  if (rc == 0) mark_posted(ctx, r);
  return rc;
}

// A full queue is -FI_EAGAIN; shm says -FI_ENOMEM instead, which is as
// temporary while operations are out to free entries.
ssize_t post(Context *ctx, Request *r) {
  ssize_t rc = attempt(ctx, r);
  return rc == -FI_ENOMEM && ctx->owned > 0 ? -FI_EAGAIN : rc;
}

Status submit(Context *ctx, Request *r, void **request) {
  Endpoint *ep = r->ep;
  std::deque<Request *> &q = ep->queue_of(r);
  if (q.empty()) {
    ssize_t rc = post(ctx, r);
    if (rc != 0 && rc != -FI_EAGAIN) {
      Status s = fail(ctx, status_of_fi_error(int(-rc)), "efa: %s rank %d (%zu B) failed: %s",
                      op_text(r->kind), ep->peer, r->size, fi_strerror(int(-rc)));
      discard(ctx, r);
      return s;
    }
    if (rc == 0) {
      *request = r;
      return SMD_TRANSPORT_OK;
    }
  }
  q.push_back(r);
  endpoint_backlog(ctx, ep);
  *request = r;
  return SMD_TRANSPORT_OK;
}

// What every starting call checks first.
Status usable(Context *ctx, Endpoint *ep, ReqKind kind, size_t size, uint64_t tag) {
  if (ep->disconnected)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "efa: %s rank %d: endpoint disconnected",
                op_text(kind), ep->peer);
  if (ep->dead) return fail(ctx, SMD_TRANSPORT_ERR_PEER, "%s", ep->death.c_str());
  if (tag >> SMD_TRANSPORT_TAG_BITS)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "efa: tag 0x%llx uses more than %d bits",
                (unsigned long long)tag, SMD_TRANSPORT_TAG_BITS);
  if (size > ctx->prov.max_msg_size)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                "efa: %zu B exceeds provider %s's largest message (%llu B)", size,
                ctx->prov.name.c_str(), (unsigned long long)ctx->prov.max_msg_size);
  return SMD_TRANSPORT_OK;
}

}  // namespace

Status start_send(Context *ctx, Endpoint *ep, const void *buf, size_t size, Registration *mr,
                  uint64_t tag, void **request) {
  if (Status s = usable(ctx, ep, ReqKind::kSend, size, tag)) return s;
  // Without directed receives the receiver matches our rank in the tag.
  uint64_t wire = tag | (ctx->prov.rank_shift ? uint64_t(ctx->rank) << ctx->prov.rank_shift : 0);
  Request *r = new_request(ctx, ep, ReqKind::kSend, const_cast<void *>(buf), size, wire);
  if (!injectable(ctx, r))
    if (Status s = local_descriptor(ctx, r, mr)) {
      discard(ctx, r);
      return s;
    }
  return submit(ctx, r, request);
}

Status start_recv(Context *ctx, Endpoint *ep, void *buf, size_t size, Registration *mr,
                  uint64_t tag, void **request) {
  if (Status s = usable(ctx, ep, ReqKind::kRecv, size, tag)) return s;
  uint64_t wire = tag | (ctx->prov.rank_shift ? uint64_t(ep->peer) << ctx->prov.rank_shift : 0);
  Request *r = new_request(ctx, ep, ReqKind::kRecv, buf, size, wire);
  if (Status s = local_descriptor(ctx, r, mr)) {
    discard(ctx, r);
    return s;
  }
  if (ctx->prov.framed) {  // matched in software: the provider sees later parts only
    frame_recv_start(ctx, r);
    *request = r;
    return SMD_TRANSPORT_OK;
  }
  return submit(ctx, r, request);
}

Status start_get(Context *ctx, Endpoint *ep, void *local, Registration *local_mr, uint64_t remote,
                 uint64_t key, size_t size, void **request) {
  if (Status s = usable(ctx, ep, ReqKind::kGet, size, 0)) return s;
  Request *r = new_request(ctx, ep, ReqKind::kGet, local, size, 0);
  if (ctx->prov.framed && ep->cma) {
    cma_get(ctx, r, remote);
    *request = r;
    return SMD_TRANSPORT_OK;
  }
  r->remote = remote;
  r->key = key;
  if (Status s = local_descriptor(ctx, r, local_mr)) {
    discard(ctx, r);
    return s;
  }
  return submit(ctx, r, request);
}

void endpoint_backlog(Context *ctx, Endpoint *ep) {
  if (ep->in_backlog) return;
  ep->in_backlog = true;
  ctx->backlog.push_back(ep);
}

void mark_posted(Context *ctx, Request *r) {
  if (r->kind != ReqKind::kStream) r->state = ReqState::kPosted;
  r->posted = true;
  ++r->ep->owned;
  ++ctx->owned;
}

void repost(Context *ctx, Request *r) {
  Endpoint *ep = r->ep;
  std::deque<Request *> &q = ep->queue_of(r);
  if (r->kind != ReqKind::kStream) r->state = ReqState::kQueued;
  q.push_back(r);
  endpoint_backlog(ctx, ep);
  if (q.size() == 1) flush_queues(ctx, ep);
}

void flush_queues(Context *ctx, Endpoint *ep) {
  // Receives first and whatever the peer's queues hold: a peer can only
  // take our sends (and acknowledgements) while we take its messages, so
  // refused sends must never hold our receives back (both would wait).
  const bool acked = acks_flush(ctx, ep);
  for (std::deque<Request *> *q : {&ep->part_queue, &ep->rx_queue, &ep->tx_queue})
    while (!q->empty() && (acked || q != &ep->tx_queue)) {
      Request *r = q->front();
      ssize_t rc = post(ctx, r);
      if (rc == -FI_EAGAIN) break;
      q->pop_front();
      if (rc == 0) continue;
      char text[300];
      snprintf(text, sizeof text, "efa: %s rank %d (%zu B) failed: %s", op_text(r->kind), ep->peer,
               r->size, fi_strerror(int(-rc)));
      if (r->kind == ReqKind::kStream) {  // the endpoint receives one frame fewer at a time
        log_line(ctx, SMD_TRANSPORT_LOG_WARN, "%s", text);
        auto &stream = ep->frames->stream;
        stream.erase(std::remove(stream.begin(), stream.end(), r), stream.end());
        frame_release(ctx, r);
        ctx->pool.release(r);
        continue;
      }
      r->error = text;
      request_finish(ctx, r, status_of_fi_error(int(-rc)), 0);
    }
}

}  // namespace smd_efa
