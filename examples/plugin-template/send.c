/* send.c - isend and the writer: the sending direction of a peer.
 *
 * ABI rules this file follows:
 *   - isend never blocks: it queues the message's first frame, tries to
 *     write it right away (a small message usually leaves in this call),
 *     and returns; progress writes the rest when the socket has room.
 *   - the buffer belongs to the plugin until the request completes: an
 *     eager send completes once its whole frame is in the kernel, a
 *     rendezvous send once its last DATA byte is.
 *   - the plugin never touches a buffer after cancel() returns: a frame
 *     that is half written by then is finished from a private copy,
 *     because a TCP stream cannot skip the rest of a frame it announced.
 *
 * Order: frames of a peer leave in the order queued (sendq), which keeps
 * same-tag messages in send order. DATA chunks of the message being
 * streamed (bulk) alternate with queued frames, so a small message waits
 * for at most one chunk. A CTS (ctrlq) goes before all of them: the
 * peer's whole message waits for it, so when both ranks send to each other
 * at once, a CTS queued behind our own DATA would hold the peer's stream
 * back for as long as that DATA takes on the link, and the two directions
 * would take turns instead of running together. The socket keeps little
 * unsent data (TCP_NOTSENT_LOWAT, socket.c) for the same reason: a CTS
 * written while we stream still waits behind whatever the kernel holds.
 */
#include "tcp.h" /* first: it selects the system interfaces (_GNU_SOURCE) */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* Bytes one writer pass may send to one peer before the engine moves on
 * to the other peers. */
#define TCP_WRITE_BUDGET (8u << 20)

static void prepare(tcp_out *o, const tcp_frame *f, const char *payload, size_t len) {
  tcp_frame_encode(o->header, f);
  o->kind = f->kind;
  o->flags = f->flags;
  o->payload = len > 0 ? payload : NULL;
  o->payload_len = len;
  o->written = 0;
  o->queued = 1;
}

void tcp_queue_frame(tcp_peer *p, tcp_out *o, const tcp_frame *f, const char *payload, size_t len) {
  prepare(o, f, payload, len);
  tcp_fifo_push(f->kind == TCP_FRAME_CTS ? &p->ctrlq : &p->sendq, &o->link);
}

int tcp_writer_busy(const tcp_peer *p) {
  return p->current != NULL || !tcp_fifo_empty(&p->ctrlq) || !tcp_fifo_empty(&p->sendq) ||
         !tcp_fifo_empty(&p->bulk);
}

/* The next DATA frame of the oldest message being streamed. */
static tcp_out *next_chunk(tcp_peer *p) {
  tcp_request *r = TCP_CONTAINER(p->bulk.head, tcp_request, q.link);
  tcp_frame f;
  memset(&f, 0, sizeof f);
  f.kind = TCP_FRAME_DATA;
  size_t len = 0;
  if (r->cancelled) {
    f.flags = TCP_DATA_ABORT; /* the receiver stops waiting for the rest */
  } else {
    len = r->accepted - r->offset;
    if (len > TCP_CHUNK) len = TCP_CHUNK;
    if (r->offset + len == r->accepted) f.flags = TCP_DATA_LAST;
  }
  f.size = len;
  prepare(&r->out, &f, len > 0 ? r->buf + r->offset : NULL, len);
  return &r->out;
}

static tcp_out *next_frame(tcp_peer *p) {
  /* The HELLO (the head of sendq until written) opens the connection. */
  if (!tcp_fifo_empty(&p->ctrlq) && !p->hello.queued)
    return TCP_CONTAINER(tcp_fifo_pop(&p->ctrlq), tcp_out, link);
  int have_bulk = !tcp_fifo_empty(&p->bulk), have_frames = !tcp_fifo_empty(&p->sendq);
  if (have_bulk && (p->bulk_turn || !have_frames)) {
    p->bulk_turn = 0;
    return next_chunk(p);
  }
  if (!have_frames) return NULL;
  p->bulk_turn = 1;
  return TCP_CONTAINER(tcp_fifo_pop(&p->sendq), tcp_out, link);
}

static void queue_retract(tcp_peer *p, tcp_request *r) {
  if (r->retract.queued) return;
  tcp_frame f;
  memset(&f, 0, sizeof f);
  f.kind = TCP_FRAME_RETRACT;
  f.tag = r->q.tag;
  f.id = r->send_id;
  tcp_queue_frame(p, &r->retract, &f, NULL, 0);
}

/* A frame is entirely in the kernel: move its request on. */
static void frame_written(tcp_ctx *ctx, tcp_peer *p, tcp_out *o) {
  o->queued = 0;
  free(o->copy);
  o->copy = NULL;
  tcp_request *r = o->owner;
  if (r == NULL) return; /* the HELLO */
  switch (o->kind) {
    case TCP_FRAME_EAGER: tcp_request_finish(ctx, r, SMD_TRANSPORT_OK, r->size, NULL); break;
    case TCP_FRAME_RTS:
      r->state = TCP_SEND_WAIT_CTS;
      tcp_fifo_push(&p->awaiting_cts, &r->q.link);
      /* Cancelled while the RTS was on its way out: take it back. The
       * request stays (a tombstone) until the peer's CTS, if one was
       * already sent, has been answered with an ABORT. */
      if (r->cancelled) queue_retract(p, r);
      break;
    case TCP_FRAME_DATA:
      r->offset += (size_t)tcp_get_u64(o->header + 16);
      if (o->flags & (TCP_DATA_LAST | TCP_DATA_ABORT)) {
        tcp_fifo_pop(&p->bulk); /* it is the head: one stream at a time */
        tcp_request_finish(ctx, r, SMD_TRANSPORT_OK, r->size, NULL);
      }
      break;
    default: /* CTS of a receive, RETRACT of a cancelled send */
      tcp_request_release_if_idle(ctx, r);
      break;
  }
}

void tcp_writer_run(tcp_ctx *ctx, tcp_peer *p) {
  size_t budget = TCP_WRITE_BUDGET;
  while (p->out_fd >= 0 && !p->out_connecting) {
    tcp_out *o = p->current;
    if (o == NULL) {
      if (budget == 0) return;
      o = p->current = next_frame(p);
      if (o == NULL) return;
    }
    /* Header and payload in one system call where possible. */
    struct iovec iov[2];
    int n = 0;
    if (o->written < TCP_HEADER_SIZE) {
      iov[n].iov_base = o->header + o->written;
      iov[n++].iov_len = TCP_HEADER_SIZE - o->written;
      if (o->payload_len > 0) {
        iov[n].iov_base = (void *)o->payload;
        iov[n++].iov_len = o->payload_len;
      }
    } else {
      size_t off = o->written - TCP_HEADER_SIZE;
      iov[n].iov_base = (void *)(o->payload + off);
      iov[n++].iov_len = o->payload_len - off;
    }
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = iov;
    msg.msg_iovlen = (size_t)n;
    /* MSG_NOSIGNAL: a peer that is gone gives EPIPE here instead of
     * SIGPIPE, which would kill the application. */
    ssize_t w = sendmsg(p->out_fd, &msg, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return; /* full: poll for POLLOUT */
      tcp_out_fail(ctx, p, "sending to rank %d: %s", p->rank, strerror(errno));
      return;
    }
    o->written += (size_t)w;
    budget = (size_t)w >= budget ? 0 : budget - (size_t)w;
    if (o->written == TCP_HEADER_SIZE + o->payload_len) {
      p->current = NULL;
      frame_written(ctx, p, o);
    }
  }
}

tcp_status tcp_send_start(tcp_ctx *ctx, tcp_peer *p, const void *buf, size_t size, uint64_t tag,
                          void **request) {
  tcp_request *r = tcp_request_new(ctx, p, TCP_REQ_SEND, (void *)buf, size, tag);
  if (r == NULL)
    return tcp_fail(ctx, SMD_TRANSPORT_ERR_NO_MEMORY,
                    "tcp: isend of %zu bytes to rank %d: out of memory", size, p->rank);
  *request = r;
  if (p->dead || p->out_broken) {
    /* The ABI allows either failing here or completing later with
     * ERR_PEER; completing later gives the core a single error path
     * (test), with the reason the peer was lost. */
    tcp_request_finish(ctx, r, SMD_TRANSPORT_ERR_PEER, 0, NULL);
    return SMD_TRANSPORT_OK;
  }
  tcp_frame f;
  memset(&f, 0, sizeof f);
  f.tag = tag;
  f.size = size;
  r->state = TCP_SEND_QUEUED;
  if (size <= TCP_EAGER_LIMIT) {
    f.kind = TCP_FRAME_EAGER;
    tcp_queue_frame(p, &r->out, &f, (const char *)buf, size);
  } else {
    f.kind = TCP_FRAME_RTS;
    f.id = r->send_id = ctx->next_send_id++;
    tcp_queue_frame(p, &r->out, &f, NULL, 0);
  }
  tcp_writer_run(ctx, p);
  return SMD_TRANSPORT_OK;
}

void tcp_cts_arrived(tcp_ctx *ctx, tcp_peer *p, uint64_t send_id, uint64_t accepted) {
  /* Linear: only sends whose RTS is out and unanswered are here, a
   * handful in practice (large messages are few and answered quickly). */
  tcp_link *prev = NULL, *it = p->awaiting_cts.head;
  for (; it != NULL; prev = it, it = it->next)
    if (TCP_CONTAINER(it, tcp_request, q.link)->send_id == send_id) break;
  if (it == NULL) {
    tcp_peer_fail(ctx, p, "protocol error: rank %d sent CTS for unknown message %llu", p->rank,
                  (unsigned long long)send_id);
    return;
  }
  tcp_request *r = TCP_CONTAINER(it, tcp_request, q.link);
  if (accepted > r->size) {
    tcp_peer_fail(ctx, p, "protocol error: rank %d asks for %llu bytes of a %zu-byte message",
                  p->rank, (unsigned long long)accepted, r->size);
    return;
  }
  tcp_fifo_unlink(&p->awaiting_cts, prev, it);
  r->accepted = (size_t)accepted;
  r->offset = 0;
  r->state = TCP_SEND_STREAMING;
  tcp_fifo_push(&p->bulk, &r->q.link);
}

/* The frame being written belongs to a request the core let go of: keep
 * its payload in memory we own until the frame is out. */
static void detach(tcp_ctx *ctx, tcp_peer *p, tcp_out *o) {
  if (o->payload_len == 0 || o->copy != NULL) return;
  char *copy = malloc(o->payload_len);
  if (copy == NULL) {
    tcp_out_fail(ctx, p, "out of memory while cancelling a send to rank %d", p->rank);
    return;
  }
  memcpy(copy, o->payload, o->payload_len);
  o->copy = copy;
  o->payload = copy;
}

void tcp_send_cancel(tcp_ctx *ctx, tcp_request *r) {
  tcp_peer *p = r->peer;
  switch (r->state) {
    case TCP_SEND_QUEUED:
      if (p->current == &r->out) {
        /* Finishes from the copy: an eager message is then delivered
         * (too late to take back), an RTS is then retracted. */
        detach(ctx, p, &r->out);
        return;
      }
      tcp_fifo_remove(&p->sendq, &r->out.link);
      r->out.queued = 0;
      tcp_request_finish(ctx, r, SMD_TRANSPORT_ERR_CANCELED, 0, NULL);
      return;
    case TCP_SEND_WAIT_CTS:
      queue_retract(p, r);
      tcp_writer_run(ctx, p);
      return;
    case TCP_SEND_STREAMING:
      /* next_chunk sends ABORT instead of more data. */
      if (p->current == &r->out) detach(ctx, p, &r->out);
      return;
    default: return;
  }
}
