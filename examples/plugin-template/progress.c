/* progress.c - the progress engine, and what happens when a peer is lost.
 *
 * Nothing moves unless the core calls in: there is no background thread
 * (a plugin may start one, but then it must be THREAD_SAFE inside).
 * progress(), test() and wait() all run one pass: poll() every socket,
 * then accept, read and write whatever is ready. wait(timeout) is the same
 * pass with poll() allowed to sleep: it returns as soon as any socket has
 * something (a frame arrived, room to write, a peer closed), which is what
 * "wakes up when a message arrives" needs, and after the timeout
 * otherwise. It returns OK either way; the core then tests its requests.
 *
 * Liveness (ABI: a request on a dead peer completes with ERR_PEER within
 * a few seconds, never hangs): a process that exits or is killed has its
 * sockets closed by its kernel, so we read EOF or get ECONNRESET/EPIPE
 * within one pass. A host that dies is caught by keepalive and
 * TCP_USER_TIMEOUT (socket.c).
 *
 *   - the peer's connection to us ends: the peer is dead. Every request
 *     on it completes with ERR_PEER, except that messages already
 *     received stay deliverable;
 *   - our connection to it breaks: sends and receives that still need to
 *     send (a CTS) complete with ERR_PEER; other receives wait for the
 *     peer's own connection to end (its last messages may still be in
 *     flight on it: the two connections are not ordered with each other).
 *     If it has no connection to us yet, its connection may still be on
 *     the way (a rank that sends its last message and exits closes both
 *     at once, and ours can be noticed before its connection is accepted):
 *     it gets TCP_LATE_CONNECT_MS to arrive before the peer counts as dead.
 */
#include "tcp.h" /* first: it selects the system interfaces (_GNU_SOURCE) */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define TCP_LATE_CONNECT_MS 2000

static int slots_reserve(tcp_ctx *ctx, size_t n) {
  if (n <= ctx->slot_cap) return 0;
  size_t cap = ctx->slot_cap ? ctx->slot_cap : 16;
  while (cap < n) cap *= 2;
  struct pollfd *slots = realloc(ctx->slots, cap * sizeof *slots);
  if (slots != NULL) ctx->slots = slots;
  tcp_slot_role *roles = realloc(ctx->slot_role, cap * sizeof *roles);
  if (roles != NULL) ctx->slot_role = roles;
  void **objs = realloc(ctx->slot_obj, cap * sizeof *objs);
  if (objs != NULL) ctx->slot_obj = objs;
  if (slots == NULL || roles == NULL || objs == NULL) return -1;
  ctx->slot_cap = cap;
  return 0;
}

static void slot_add(tcp_ctx *ctx, size_t *n, int fd, short events, tcp_slot_role role, void *obj) {
  ctx->slots[*n].fd = fd;
  ctx->slots[*n].events = events;
  ctx->slots[*n].revents = 0;
  ctx->slot_role[*n] = role;
  ctx->slot_obj[*n] = obj;
  ++*n;
}

/* Nothing ever arrives on the connection we dialed; readable means the
 * peer closed or reset it. */
static void check_out_closed(tcp_ctx *ctx, tcp_peer *p) {
  char byte;
  ssize_t n = recv(p->out_fd, &byte, 1, MSG_DONTWAIT);
  if (n > 0) {
    tcp_peer_fail(ctx, p, "protocol error: rank %d wrote on the connection we dialed", p->rank);
    return;
  }
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (n == 0)
    tcp_out_fail(ctx, p, "rank %d closed the connection we dialed (it exited or disconnected)",
                 p->rank);
  else tcp_out_fail(ctx, p, "connection to rank %d: %s", p->rank, strerror(errno));
}

tcp_status tcp_progress(tcp_ctx *ctx, int64_t timeout_us) {
  size_t greetings = 0;
  for (tcp_greeting *g = ctx->greetings; g != NULL; g = g->next) ++greetings;
  if (slots_reserve(ctx, 1 + greetings + 2 * (size_t)ctx->world_size) != 0)
    return tcp_fail(ctx, SMD_TRANSPORT_ERR_NO_MEMORY, "tcp: progress: out of memory");
  size_t n = 0;
  slot_add(ctx, &n, ctx->listen_fd, POLLIN, TCP_SLOT_LISTEN, NULL);
  for (tcp_greeting *g = ctx->greetings; g != NULL; g = g->next)
    slot_add(ctx, &n, g->fd, POLLIN, TCP_SLOT_GREETING, g);
  int64_t now = 0, wake_ms = -1;
  for (int r = 0; r < ctx->world_size; ++r) {
    tcp_peer *p = &ctx->peers[r];
    if (p->late_ms != 0) {
      if (now == 0) now = tcp_now_ms();
      if (p->in_fd >= 0 || p->dead) {
        p->late_ms = 0;
      } else if (now >= p->late_ms) {
        p->late_ms = 0;
        size_t len = strlen(p->why);
        snprintf(p->why + len, sizeof p->why - len, "; its connection to us never came");
        tcp_peer_fail(ctx, p, "%s", p->why);
      } else if (wake_ms < 0 || p->late_ms - now < wake_ms) {
        wake_ms = p->late_ms - now;
      }
    }
    if (p->in_fd >= 0) slot_add(ctx, &n, p->in_fd, POLLIN, TCP_SLOT_IN, p);
    if (p->out_fd >= 0) {
      short events = POLLIN;
      if (p->out_connecting || tcp_writer_busy(p)) events |= POLLOUT;
      slot_add(ctx, &n, p->out_fd, events, TCP_SLOT_OUT, p);
    }
  }
  if (timeout_us < 0) timeout_us = 0;
  if (wake_ms >= 0 && timeout_us > wake_ms * 1000) timeout_us = wake_ms * 1000;
  struct timespec ts;
  ts.tv_sec = (time_t)(timeout_us / 1000000);
  ts.tv_nsec = (long)(timeout_us % 1000000) * 1000;
  int ready = ppoll(ctx->slots, (nfds_t)n, &ts, NULL);
  if (ready < 0) {
    if (errno == EINTR) return SMD_TRANSPORT_OK; /* a signal: the caller comes back */
    return tcp_fail(ctx, SMD_TRANSPORT_ERR_SYSTEM, "tcp: poll: %s", strerror(errno));
  }
  for (size_t i = 0; i < n && ready > 0; ++i) {
    short ev = ctx->slots[i].revents;
    if (ev == 0) continue;
    --ready;
    tcp_peer *p = (tcp_peer *)ctx->slot_obj[i];
    switch (ctx->slot_role[i]) {
      case TCP_SLOT_LISTEN: tcp_accept_all(ctx); break;
      case TCP_SLOT_GREETING: tcp_greeting_read(ctx, (tcp_greeting *)ctx->slot_obj[i]); break;
      case TCP_SLOT_IN:
        if (p->in_fd != ctx->slots[i].fd) break; /* closed earlier in this pass */
        tcp_reader_run(ctx, p);
        /* Reading may have queued a CTS or started a DATA stream. */
        if (tcp_writer_busy(p)) tcp_writer_run(ctx, p);
        break;
      case TCP_SLOT_OUT:
        if (p->out_fd != ctx->slots[i].fd) break;
        if (p->out_connecting) {
          tcp_dial_finished(ctx, p);
          break;
        }
        if (ev & (POLLIN | POLLHUP | POLLERR)) check_out_closed(ctx, p);
        if (p->out_fd >= 0 && (ev & POLLOUT)) tcp_writer_run(ctx, p);
        break;
    }
  }
  if (ctx->greetings != NULL) tcp_greetings_expire(ctx);
  return SMD_TRANSPORT_OK;
}

/* ---- losing a peer ------------------------------------------------------ */

static void drop_frame(tcp_ctx *ctx, tcp_peer *p, tcp_out *o, tcp_status st, const char *why) {
  o->queued = 0;
  free(o->copy);
  o->copy = NULL;
  tcp_request *r = o->owner;
  if (r == NULL) return; /* the HELLO */
  switch (o->kind) {
    case TCP_FRAME_EAGER:
    case TCP_FRAME_RTS: tcp_request_finish(ctx, r, st, 0, why); break;
    case TCP_FRAME_CTS: /* a receive that can no longer ask for its data */
      tcp_fifo_remove(&p->awaiting_data, &r->q.link);
      tcp_request_finish(ctx, r, st, 0, why);
      break;
    default: /* RETRACT: its send is failed with awaiting_cts or bulk */
      tcp_request_release_if_idle(ctx, r);
      break;
  }
}

/* Completes what needs our connection to the peer. */
static void fail_outgoing(tcp_ctx *ctx, tcp_peer *p, tcp_status st, const char *why) {
  tcp_out *cur = p->current;
  p->current = NULL;
  if (cur != NULL && cur->kind != TCP_FRAME_DATA) drop_frame(ctx, p, cur, st, why);
  if (cur != NULL && cur->kind == TCP_FRAME_DATA) cur->queued = 0; /* failed with bulk */
  tcp_link *l;
  while ((l = tcp_fifo_pop(&p->ctrlq)) != NULL)
    drop_frame(ctx, p, TCP_CONTAINER(l, tcp_out, link), st, why);
  while ((l = tcp_fifo_pop(&p->sendq)) != NULL)
    drop_frame(ctx, p, TCP_CONTAINER(l, tcp_out, link), st, why);
  while ((l = tcp_fifo_pop(&p->bulk)) != NULL) {
    tcp_request *r = TCP_CONTAINER(l, tcp_request, q.link);
    r->out.queued = 0;
    tcp_request_finish(ctx, r, st, 0, why);
  }
  while ((l = tcp_fifo_pop(&p->awaiting_cts)) != NULL)
    tcp_request_finish(ctx, TCP_CONTAINER(l, tcp_request, q.link), st, 0, why);
}

/* Completes what waits for the peer's frames. */
static void fail_incoming(tcp_ctx *ctx, tcp_peer *p, tcp_status st, const char *why) {
  tcp_reader_reset(ctx, p, st, why);
  tcp_tagged *t;
  while ((t = tcp_tagq_take_any(&p->posted)) != NULL)
    tcp_request_finish(ctx, TCP_CONTAINER(t, tcp_request, q), st, 0, why);
  tcp_link *l;
  while ((l = tcp_fifo_pop(&p->awaiting_data)) != NULL)
    tcp_request_finish(ctx, TCP_CONTAINER(l, tcp_request, q.link), st, 0, why);
}

static int has_pending(const tcp_peer *p) {
  for (int i = 0; i < TCP_TAG_BUCKETS; ++i)
    if (!tcp_fifo_empty(&p->posted.bucket[i])) return 1;
  return tcp_writer_busy(p) || !tcp_fifo_empty(&p->awaiting_cts) ||
         !tcp_fifo_empty(&p->awaiting_data) || p->rd.req != NULL;
}

static void remember_why(tcp_peer *p, const char *fmt, va_list args) {
  if (p->why[0] == '\0') vsnprintf(p->why, sizeof p->why, fmt, args);
}

void tcp_peer_fail(tcp_ctx *ctx, tcp_peer *p, const char *fmt, ...) {
  if (p->dead) return;
  va_list args;
  va_start(args, fmt);
  remember_why(p, fmt, args);
  va_end(args);
  p->dead = 1;
  /* At the end of a job every peer closes its connections; that is news
   * only if something was still pending on it. */
  tcp_log(ctx, has_pending(p) ? SMD_TRANSPORT_LOG_WARN : SMD_TRANSPORT_LOG_INFO, "%s", p->why);
  tcp_socket_close(&p->in_fd);
  if (!p->out_broken) {
    p->out_broken = 1;
    p->out_connecting = 0;
    tcp_socket_close(&p->out_fd);
    fail_outgoing(ctx, p, SMD_TRANSPORT_ERR_PEER, NULL);
  }
  fail_incoming(ctx, p, SMD_TRANSPORT_ERR_PEER, NULL);
}

void tcp_out_fail(tcp_ctx *ctx, tcp_peer *p, const char *fmt, ...) {
  if (p->out_broken) return;
  va_list args;
  va_start(args, fmt);
  remember_why(p, fmt, args);
  va_end(args);
  tcp_log(ctx, has_pending(p) ? SMD_TRANSPORT_LOG_WARN : SMD_TRANSPORT_LOG_INFO, "%s", p->why);
  p->out_broken = 1;
  p->out_connecting = 0;
  tcp_socket_close(&p->out_fd);
  fail_outgoing(ctx, p, SMD_TRANSPORT_ERR_PEER, NULL);
  if (p->in_fd < 0 && !p->dead) p->late_ms = tcp_now_ms() + TCP_LATE_CONNECT_MS;
}

void tcp_peer_shutdown(tcp_ctx *ctx, tcp_peer *p, tcp_status st, const char *why) {
  tcp_socket_close(&p->in_fd);
  tcp_socket_close(&p->out_fd);
  p->out_broken = 1;
  p->out_connecting = 0;
  fail_outgoing(ctx, p, st, why);
  fail_incoming(ctx, p, st, why);
  tcp_tagged *t;
  while ((t = tcp_tagq_take_any(&p->unexpected)) != NULL)
    tcp_unexpected_free(TCP_CONTAINER(t, tcp_unexpected, q));
}
