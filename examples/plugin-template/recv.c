/* recv.c - irecv and the reader: the receiving direction of a peer.
 *
 * ABI rules this file follows:
 *   - matching is per endpoint by exact tag, FIFO per tag (tagq.h);
 *   - a message larger than the receive is truncated: the first bytes
 *     land in the buffer, the rest is consumed and dropped, the receive
 *     completes with ERR_TRUNCATED and *size = its capacity, and the
 *     sender's request completes with OK;
 *   - messages that arrived before their receive are delivered later
 *     (unexpected queue); a rendezvous message keeps only its RTS there,
 *     so an unexpected 1 GiB message costs 32 bytes until a receive asks
 *     for it;
 *   - messages already received from a peer that then died are still
 *     delivered; everything else from it completes with ERR_PEER.
 *
 * The reader is a small state machine per peer: read a 32-byte header,
 * decide where its payload goes (a receive's buffer, a new unexpected
 * message, or nowhere), read the payload there, act on the end of the
 * frame. Reads may stop at any byte (nonblocking socket); the state
 * survives until the next progress pass.
 */
#include "tcp.h" /* first: it selects the system interfaces (_GNU_SOURCE) */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* Bytes one reader pass may take from one peer before moving on. */
#define TCP_READ_BUDGET (8u << 20)

void tcp_unexpected_free(tcp_unexpected *ux) {
  free(ux->data);
  free(ux);
}

static void frame_end(tcp_ctx *ctx, tcp_peer *p);

/* The current frame has `keep` payload bytes for dst, then `skip` to drop. */
static void expect_payload(tcp_ctx *ctx, tcp_peer *p, char *dst, size_t keep, size_t skip) {
  tcp_reader *rd = &p->rd;
  rd->dst = dst;
  rd->keep = keep;
  rd->skip = skip;
  rd->got = 0;
  rd->in_payload = keep + skip > 0;
  if (!rd->in_payload) frame_end(ctx, p);
}

/* Stop storing the current payload (its receive was cancelled). */
static void drop_rest(tcp_reader *rd) {
  if (rd->got < rd->keep) {
    rd->skip += rd->keep - rd->got;
    rd->keep = rd->got;
  }
}

static tcp_status truncation(const tcp_request *r) {
  return r->msg_size > r->size ? SMD_TRANSPORT_ERR_TRUNCATED : SMD_TRANSPORT_OK;
}

/* A receive matched an RTS: agree to take min(message, capacity) bytes. */
static void rendezvous_accept(tcp_peer *p, tcp_request *r, size_t msg_size, uint64_t send_id) {
  r->msg_size = msg_size;
  r->accepted = msg_size < r->size ? msg_size : r->size;
  r->offset = 0;
  r->send_id = send_id;
  r->state = TCP_RECV_RENDEZVOUS;
  tcp_fifo_push(&p->awaiting_data, &r->q.link);
  tcp_frame f;
  memset(&f, 0, sizeof f);
  f.kind = TCP_FRAME_CTS;
  f.id = send_id;
  f.size = r->accepted;
  tcp_queue_frame(p, &r->out, &f, NULL, 0);
}

/* Completes a receive from an eager message already in memory. */
static void deliver_unexpected(tcp_ctx *ctx, tcp_request *r, const tcp_unexpected *ux) {
  size_t n = ux->size < r->size ? ux->size : r->size;
  if (n > 0) memcpy(r->buf, ux->data, n);
  r->msg_size = ux->size;
  tcp_request_finish(ctx, r, truncation(r), n, NULL);
}

tcp_status tcp_recv_start(tcp_ctx *ctx, tcp_peer *p, void *buf, size_t size, uint64_t tag,
                          void **request) {
  tcp_request *r = tcp_request_new(ctx, p, TCP_REQ_RECV, buf, size, tag);
  if (r == NULL)
    return tcp_fail(ctx, SMD_TRANSPORT_ERR_NO_MEMORY,
                    "tcp: irecv of %zu bytes from rank %d: out of memory", size, p->rank);
  *request = r;
  tcp_tagged *t = tcp_tagq_take(&p->unexpected, tag);
  if (t != NULL) {
    tcp_unexpected *ux = TCP_CONTAINER(t, tcp_unexpected, q);
    if (!ux->rts) {
      deliver_unexpected(ctx, r, ux);
    } else if (p->dead || p->out_broken) {
      r->msg_size = ux->size; /* its data can no longer come */
      tcp_request_finish(ctx, r, SMD_TRANSPORT_ERR_PEER, 0, NULL);
    } else {
      rendezvous_accept(p, r, ux->size, ux->send_id);
      tcp_writer_run(ctx, p); /* the CTS leaves now */
    }
    tcp_unexpected_free(ux);
    return SMD_TRANSPORT_OK;
  }
  if (p->dead) {
    tcp_request_finish(ctx, r, SMD_TRANSPORT_ERR_PEER, 0, NULL);
    return SMD_TRANSPORT_OK;
  }
  r->state = TCP_RECV_POSTED;
  tcp_tagq_push(&p->posted, &r->q);
  return SMD_TRANSPORT_OK;
}

void tcp_recv_cancel(tcp_ctx *ctx, tcp_request *r) {
  tcp_peer *p = r->peer;
  switch (r->state) {
    case TCP_RECV_POSTED:
      tcp_tagq_remove(&p->posted, &r->q);
      tcp_request_finish(ctx, r, SMD_TRANSPORT_ERR_CANCELED, 0, NULL);
      return;
    case TCP_RECV_EAGER:
      drop_rest(&p->rd); /* the payload still has to be read off the wire */
      return;
    case TCP_RECV_RENDEZVOUS:
      /* The sender will stream what the CTS asks for. If the CTS has not
       * started leaving, ask for nothing instead; otherwise the data
       * arrives and is dropped. Either way the receive is freed when
       * the stream ends. */
      if (r->out.queued && r->out.written == 0 && p->current != &r->out) {
        tcp_frame f;
        memset(&f, 0, sizeof f);
        f.kind = TCP_FRAME_CTS;
        f.id = r->send_id;
        f.size = 0;
        tcp_frame_encode(r->out.header, &f);
        r->accepted = 0;
      }
      if (p->rd.req == r && p->rd.in_payload) drop_rest(&p->rd);
      return;
    default: return;
  }
}

static void protocol_error(tcp_ctx *ctx, tcp_peer *p, const char *what) {
  const tcp_frame *f = &p->rd.frame;
  tcp_peer_fail(ctx, p, "protocol error from rank %d: %s frame (tag 0x%llx, size %llu): %s",
                p->rank, tcp_frame_name(f->kind), (unsigned long long)f->tag,
                (unsigned long long)f->size, what);
}

static void begin_eager(tcp_ctx *ctx, tcp_peer *p, const tcp_frame *f) {
  tcp_reader *rd = &p->rd;
  size_t size = (size_t)f->size;
  tcp_tagged *t = tcp_tagq_take(&p->posted, f->tag);
  if (t != NULL) {
    /* Expected: straight into the receive's buffer. */
    tcp_request *r = TCP_CONTAINER(t, tcp_request, q);
    r->state = TCP_RECV_EAGER;
    r->msg_size = size;
    rd->req = r;
    size_t keep = size < r->size ? size : r->size;
    expect_payload(ctx, p, r->buf, keep, size - keep);
    return;
  }
  tcp_unexpected *ux = calloc(1, sizeof *ux);
  char *data = size > 0 ? malloc(size) : NULL;
  if (ux == NULL || (size > 0 && data == NULL)) {
    free(ux);
    free(data);
    tcp_peer_fail(ctx, p, "out of memory for a %zu-byte message from rank %d", size, p->rank);
    return;
  }
  ux->q.tag = f->tag;
  ux->size = size;
  ux->data = data;
  rd->ux = ux;
  expect_payload(ctx, p, data, size, 0);
}

static void begin_rts(tcp_ctx *ctx, tcp_peer *p, const tcp_frame *f) {
  tcp_tagged *t = tcp_tagq_take(&p->posted, f->tag);
  if (t != NULL) {
    tcp_request *r = TCP_CONTAINER(t, tcp_request, q);
    if (p->out_broken) {
      r->msg_size = (size_t)f->size; /* no way to send the CTS */
      tcp_request_finish(ctx, r, SMD_TRANSPORT_ERR_PEER, 0, NULL);
    } else {
      rendezvous_accept(p, r, (size_t)f->size, f->id);
    }
    return;
  }
  tcp_unexpected *ux = calloc(1, sizeof *ux);
  if (ux == NULL) {
    tcp_peer_fail(ctx, p, "out of memory for a message descriptor from rank %d", p->rank);
    return;
  }
  ux->q.tag = f->tag;
  ux->rts = 1;
  ux->size = (size_t)f->size;
  ux->send_id = f->id;
  tcp_tagq_push(&p->unexpected, &ux->q);
}

static void begin_data(tcp_ctx *ctx, tcp_peer *p, const tcp_frame *f) {
  if (tcp_fifo_empty(&p->awaiting_data)) {
    protocol_error(ctx, p, "no receive is waiting for data");
    return;
  }
  tcp_request *r = TCP_CONTAINER(p->awaiting_data.head, tcp_request, q.link);
  if (f->size > r->accepted - r->offset ||
      ((f->flags & TCP_DATA_LAST) && r->offset + f->size != r->accepted)) {
    protocol_error(ctx, p, "more or less data than the CTS asked for");
    return;
  }
  size_t len = (size_t)f->size;
  p->rd.req = r;
  if (r->cancelled) expect_payload(ctx, p, NULL, 0, len);
  else expect_payload(ctx, p, len > 0 ? r->buf + r->offset : NULL, len, 0);
}

/* The sender cancelled a send whose RTS we have: drop it if no receive
 * took it yet (if one did, an ABORT in the data stream ends it). */
static void retract(tcp_peer *p, const tcp_frame *f) {
  tcp_fifo *bucket = tcp_tagq_bucket(&p->unexpected, f->tag);
  tcp_link *prev = NULL;
  for (tcp_link *it = bucket->head; it != NULL; prev = it, it = it->next) {
    tcp_unexpected *ux = TCP_CONTAINER(it, tcp_unexpected, q.link);
    if (ux->rts && ux->q.tag == f->tag && ux->send_id == f->id) {
      tcp_fifo_unlink(bucket, prev, it);
      tcp_unexpected_free(ux);
      return;
    }
  }
}

/* A header is complete: decide where its payload goes. */
static void frame_begin(tcp_ctx *ctx, tcp_peer *p) {
  const tcp_frame *f = &p->rd.frame;
  p->rd.req = NULL;
  p->rd.ux = NULL;
  switch (f->kind) {
    case TCP_FRAME_EAGER:
      if (f->size > TCP_EAGER_LIMIT) protocol_error(ctx, p, "larger than the eager limit");
      else begin_eager(ctx, p, f);
      return;
    case TCP_FRAME_RTS: begin_rts(ctx, p, f); return;
    case TCP_FRAME_CTS: tcp_cts_arrived(ctx, p, f->id, f->size); return;
    case TCP_FRAME_DATA: begin_data(ctx, p, f); return;
    case TCP_FRAME_RETRACT: retract(p, f); return;
    default: protocol_error(ctx, p, "not expected on an established connection"); return;
  }
}

/* A frame's payload is all read. */
static void frame_end(tcp_ctx *ctx, tcp_peer *p) {
  tcp_reader *rd = &p->rd;
  const tcp_frame *f = &rd->frame;
  tcp_request *r = rd->req;
  tcp_unexpected *ux = rd->ux;
  rd->req = NULL;
  rd->ux = NULL;
  if (f->kind == TCP_FRAME_EAGER) {
    if (r != NULL) {
      tcp_request_finish(ctx, r, truncation(r), rd->keep, NULL);
      return;
    }
    /* A receive may have been posted while the payload was arriving. */
    tcp_tagged *t = tcp_tagq_take(&p->posted, f->tag);
    if (t != NULL) {
      deliver_unexpected(ctx, TCP_CONTAINER(t, tcp_request, q), ux);
      tcp_unexpected_free(ux);
    } else {
      tcp_tagq_push(&p->unexpected, &ux->q);
    }
    return;
  }
  if (f->kind == TCP_FRAME_DATA) {
    r->offset += (size_t)f->size;
    if (f->flags & TCP_DATA_ABORT) {
      tcp_fifo_pop(&p->awaiting_data);
      tcp_request_finish(ctx, r, SMD_TRANSPORT_ERR_CANCELED, r->offset,
                         "the sender cancelled the message");
    } else if (f->flags & TCP_DATA_LAST) {
      tcp_fifo_pop(&p->awaiting_data);
      tcp_request_finish(ctx, r, truncation(r), r->accepted, NULL);
    }
  }
}

void tcp_reader_run(tcp_ctx *ctx, tcp_peer *p) {
  tcp_reader *rd = &p->rd;
  size_t budget = TCP_READ_BUDGET;
  while (p->in_fd >= 0 && budget > 0) {
    ssize_t n;
    if (!rd->in_payload) {
      n = recv(p->in_fd, rd->header + rd->header_got, TCP_HEADER_SIZE - rd->header_got, 0);
    } else if (rd->got < rd->keep) {
      n = recv(p->in_fd, rd->dst + rd->got, rd->keep - rd->got, 0);
    } else {
      size_t left = rd->keep + rd->skip - rd->got;
      n = recv(p->in_fd, ctx->scratch, left < sizeof ctx->scratch ? left : sizeof ctx->scratch, 0);
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      tcp_peer_fail(ctx, p, "receiving from rank %d: %s", p->rank, strerror(errno));
      return;
    }
    if (n == 0) {
      /* EOF: the peer closed its connection, or its process ended and
       * the kernel closed it. Everything it sent before is read. */
      if (rd->in_payload || rd->header_got > 0)
        tcp_peer_fail(ctx, p, "rank %d closed its connection in the middle of a frame", p->rank);
      else
        tcp_peer_fail(ctx, p, "rank %d closed its connection (it exited or disconnected)", p->rank);
      return;
    }
    budget = (size_t)n >= budget ? 0 : budget - (size_t)n;
    if (!rd->in_payload) {
      rd->header_got += (size_t)n;
      if (rd->header_got < TCP_HEADER_SIZE) continue;
      rd->header_got = 0;
      tcp_frame_decode(rd->header, &rd->frame);
      frame_begin(ctx, p);
    } else {
      rd->got += (size_t)n;
      if (rd->got == rd->keep + rd->skip) {
        rd->in_payload = 0;
        frame_end(ctx, p);
      }
    }
  }
}

void tcp_reader_reset(tcp_ctx *ctx, tcp_peer *p, tcp_status st, const char *why) {
  tcp_reader *rd = &p->rd;
  /* A receive filled from an EAGER frame is in no other queue; one filled
   * by DATA is in awaiting_data and is failed with it. */
  if (rd->req != NULL && rd->req->state == TCP_RECV_EAGER)
    tcp_request_finish(ctx, rd->req, st, 0, why);
  if (rd->ux != NULL) tcp_unexpected_free(rd->ux);
  memset(rd, 0, sizeof *rd);
}
