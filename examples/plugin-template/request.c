/* request.c - the life of a request: created by isend/irecv, finished by
 * the wire, handed back by test() or cancel().
 *
 * ABI rules this file follows:
 *   - test() drives progress, then reports. Until the request is done it
 *     returns IN_PROGRESS with *done = 0 (OK would be allowed too). When
 *     done it sets *done = 1, returns the operation's status (explained
 *     with set_error if not OK), stores the bytes moved in *size, and
 *     releases the request: the handle is invalid afterwards.
 *   - cancel() releases an unfinished request at once, and the plugin
 *     never touches its buffer after cancel() returns. The wire may still
 *     need the request object (a frame half written, a rendezvous the peer
 *     already agreed to), so the object can outlive the handle, marked
 *     `cancelled`, and is freed once nothing refers to it.
 *   - a truncated receive completes with ERR_TRUNCATED, the first bytes of
 *     the message in the buffer, and *size = the receive's capacity.
 */
#include "tcp.h" /* first: it selects the system interfaces (_GNU_SOURCE) */

#include <stdio.h>
#include <stdlib.h>

tcp_request *tcp_request_new(tcp_ctx *ctx, tcp_peer *p, tcp_req_kind kind, void *buf, size_t size,
                             uint64_t tag) {
  tcp_request *r = calloc(1, sizeof *r);
  if (r == NULL) return NULL;
  r->magic = TCP_REQ_MAGIC;
  r->kind = kind;
  r->state = TCP_REQ_DONE;
  r->ctx = ctx;
  r->peer = p;
  r->q.tag = tag;
  r->buf = (char *)buf;
  r->size = size;
  r->out.owner = r;
  r->retract.owner = r;
  r->all_next = ctx->requests;
  if (ctx->requests != NULL) ctx->requests->all_prev = r;
  ctx->requests = r;
  return r;
}

void tcp_request_free(tcp_ctx *ctx, tcp_request *r) {
  if (r->all_prev != NULL) r->all_prev->all_next = r->all_next;
  else ctx->requests = r->all_next;
  if (r->all_next != NULL) r->all_next->all_prev = r->all_prev;
  free(r->out.copy);
  r->magic = 0;
  free(r);
}

void tcp_request_release_if_idle(tcp_ctx *ctx, tcp_request *r) {
  if (r->cancelled && r->state == TCP_REQ_DONE && !r->out.queued && !r->retract.queued)
    tcp_request_free(ctx, r);
}

void tcp_request_finish(tcp_ctx *ctx, tcp_request *r, tcp_status st, size_t result,
                        const char *why) {
  r->state = TCP_REQ_DONE;
  r->status = st;
  r->result = result;
  r->why = why;
  if (r->cancelled) tcp_request_release_if_idle(ctx, r);
}

/* The set_error text of a finished request, composed when test() reports
 * it rather than stored per request. */
static tcp_status explain(tcp_ctx *ctx, const tcp_request *r) {
  const char *what = r->kind == TCP_REQ_SEND ? "send to" : "receive from";
  switch (r->status) {
    case SMD_TRANSPORT_ERR_PEER:
      return tcp_fail(ctx, r->status, "tcp: %s rank %d failed: %s", what, r->peer->rank,
                      r->peer->why[0] ? r->peer->why : "peer unreachable");
    case SMD_TRANSPORT_ERR_TRUNCATED:
      return tcp_fail(ctx, r->status,
                      "tcp: message of %zu bytes from rank %d truncated to the %zu-byte "
                      "receive",
                      r->msg_size, r->peer->rank, r->size);
    default:
      /* smd_transport_status_string() (smd_transport.h) names any status,
       * so no plugin needs a table of its own. */
      return tcp_fail(ctx, r->status, "tcp: %s rank %d: %s", what, r->peer->rank,
                      r->why ? r->why : smd_transport_status_string(r->status));
  }
}

tcp_status tcp_request_test(tcp_ctx *ctx, tcp_request *r, int *done, size_t *size) {
  *done = 0;
  if (r->state != TCP_REQ_DONE) {
    tcp_status st = tcp_progress(ctx, 0);
    if (st != SMD_TRANSPORT_OK) return st;
    /* Progress may have finished it. */
    if (r->state != TCP_REQ_DONE) return SMD_TRANSPORT_IN_PROGRESS;
  }
  *done = 1;
  if (size != NULL) *size = r->result;
  tcp_status st = r->status;
  if (st != SMD_TRANSPORT_OK) explain(ctx, r);
  tcp_request_free(ctx, r);
  return st;
}

tcp_status tcp_request_cancel(tcp_ctx *ctx, tcp_request *r) {
  if (r->state == TCP_REQ_DONE) {
    tcp_request_free(ctx, r);
    return SMD_TRANSPORT_OK;
  }
  r->cancelled = 1;
  if (r->kind == TCP_REQ_SEND) tcp_send_cancel(ctx, r);
  else tcp_recv_cancel(ctx, r);
  return SMD_TRANSPORT_OK;
}
