/* connect.c - endpoints and connections.
 *
 * connect(peer) dials our one-way connection to the peer and queues a
 * HELLO on it; it returns at once (the ABI allows an endpoint whose
 * connection is not up yet: frames wait in its queue). The peer's
 * connection to us arrives on our listening socket whenever the peer
 * calls its own connect(), possibly never: the core connects lazily, on
 * first use of a peer, so a rank may receive from a peer it never sent to.
 * An accepted connection is anonymous until its HELLO says which rank
 * dialed, and for which listener (the nonce of our address blob).
 *
 * ABI rules this file follows:
 *   - connect() to this rank itself is refused with ERR_INVALID: the core
 *     never connects a rank to itself (it copies locally), so the plugin
 *     need not loop messages back;
 *   - the address blob is untrusted input: checked before use;
 *   - disconnect() completes every pending request on the endpoint with
 *     ERR_CANCELED (the core still tests or cancels them) and closes the
 *     connections; the endpoint handle is invalid afterwards.
 */
#include "tcp.h" /* first: it selects the system interfaces (_GNU_SOURCE) */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* An accepted connection must say HELLO within this time. */
#define TCP_GREETING_MS 10000

tcp_status tcp_endpoint_connect(tcp_ctx *ctx, int32_t rank, const void *blob, size_t size,
                                void **endpoint) {
  if (rank < 0 || rank >= ctx->world_size)
    return tcp_fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                    "tcp: connect: rank %d is not in the world of %d", (int)rank, ctx->world_size);
  if (rank == ctx->rank)
    return tcp_fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                    "tcp: connect: rank %d is this rank; connecting to oneself is not "
                    "supported (the core never does)",
                    (int)rank);
  tcp_peer *p = &ctx->peers[rank];
  if (p->connected || p->closed)
    return tcp_fail(ctx, SMD_TRANSPORT_ERR_INVALID, "tcp: connect: rank %d is already %s",
                    (int)rank,
                    p->closed ? "disconnected (reconnecting is not supported)" : "connected");
  char why[160];
  if (tcp_address_decode(blob, size, &p->addr, &p->nonce, why, sizeof why) != 0)
    return tcp_fail(ctx, SMD_TRANSPORT_ERR_INVALID, "tcp: connect to rank %d: %s", (int)rank, why);
  char where[64];
  tcp_socket_text(&p->addr, where, sizeof where);
  /* A peer whose connection to us already ended is gone: hand out the
   * endpoint anyway; its requests complete with ERR_PEER. */
  if (!p->dead) {
    int fd = -1, in_progress = 0;
    if (tcp_socket_dial(&p->addr, ctx->host->timeout_ms, &fd, &in_progress, why, sizeof why) != 0)
      return tcp_fail(ctx, SMD_TRANSPORT_ERR_PEER, "tcp: connect to rank %d at %s: %s", (int)rank,
                      where, why);
    p->out_fd = fd;
    p->out_connecting = in_progress;
    tcp_frame hello;
    memset(&hello, 0, sizeof hello);
    hello.kind = TCP_FRAME_HELLO;
    hello.flags = TCP_WIRE_VERSION;
    hello.tag = p->nonce;
    hello.size = (uint64_t)ctx->rank;
    hello.id = (uint64_t)ctx->world_size;
    tcp_queue_frame(p, &p->hello, &hello, NULL, 0);
    tcp_log(ctx, SMD_TRANSPORT_LOG_TRACE, "dialing rank %d at %s", (int)rank, where);
  }
  p->connected = 1;
  *endpoint = p;
  tcp_writer_run(ctx, p);
  return SMD_TRANSPORT_OK;
}

tcp_status tcp_endpoint_disconnect(tcp_ctx *ctx, tcp_peer *p) {
  tcp_peer_shutdown(ctx, p, SMD_TRANSPORT_ERR_CANCELED, "the endpoint was disconnected");
  p->connected = 0;
  p->closed = 1;
  return SMD_TRANSPORT_OK;
}

void tcp_dial_finished(tcp_ctx *ctx, tcp_peer *p) {
  int err = tcp_socket_dial_result(p->out_fd);
  if (err == EINPROGRESS || err == EINTR) return;
  if (err != 0) {
    char where[64];
    tcp_socket_text(&p->addr, where, sizeof where);
    /* The peer's listening socket exists before its address is published,
     * so a refusal means it is gone, not that it is early. */
    tcp_out_fail(ctx, p, "connecting to rank %d at %s: %s", p->rank, where, strerror(err));
    return;
  }
  p->out_connecting = 0;
  tcp_writer_run(ctx, p);
}

void tcp_accept_all(tcp_ctx *ctx) {
  for (;;) {
    int fd = accept4(ctx->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        tcp_log(ctx, SMD_TRANSPORT_LOG_WARN, "accept: %s", strerror(errno));
      return;
    }
    tcp_greeting *g = calloc(1, sizeof *g);
    if (g == NULL) {
      tcp_socket_close(&fd);
      tcp_log(ctx, SMD_TRANSPORT_LOG_WARN, "accept: out of memory; connection dropped");
      return;
    }
    g->fd = fd;
    g->deadline_ms = tcp_now_ms() + TCP_GREETING_MS;
    g->next = ctx->greetings;
    ctx->greetings = g;
  }
}

static void greeting_drop(tcp_ctx *ctx, tcp_greeting *g) {
  tcp_greeting **link = &ctx->greetings;
  while (*link != NULL && *link != g) link = &(*link)->next;
  if (*link == g) *link = g->next;
  tcp_socket_close(&g->fd);
  free(g);
}

/* Why a complete HELLO is refused, or NULL if it is fine. */
static const char *hello_problem(tcp_ctx *ctx, const tcp_frame *f) {
  if (f->kind != TCP_FRAME_HELLO) return "the first frame is not a HELLO";
  if (f->flags != TCP_WIRE_VERSION) return "another tcp wire version";
  if (f->tag != ctx->nonce) return "it greets another listener (a stale job on a reused port?)";
  if (f->id != (uint64_t)ctx->world_size) return "it is in a world of another size";
  if (f->size >= (uint64_t)ctx->world_size || f->size == (uint64_t)ctx->rank)
    return "its rank is out of range";
  const tcp_peer *p = &ctx->peers[f->size];
  if (p->in_fd >= 0) return "that rank is connected already";
  if (p->dead || p->closed) return "that rank's connection already ended";
  return NULL;
}

void tcp_greeting_read(tcp_ctx *ctx, tcp_greeting *g) {
  ssize_t n = recv(g->fd, g->header + g->got, TCP_HEADER_SIZE - g->got, 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (n <= 0) {
    tcp_log(ctx, SMD_TRANSPORT_LOG_INFO, "an accepted connection closed before its HELLO");
    greeting_drop(ctx, g);
    return;
  }
  g->got += (size_t)n;
  if (g->got < TCP_HEADER_SIZE) return;
  tcp_frame f;
  tcp_frame_decode(g->header, &f);
  const char *problem = hello_problem(ctx, &f);
  if (problem != NULL) {
    tcp_log(ctx, SMD_TRANSPORT_LOG_WARN, "refused a connection claiming rank %llu: %s",
            (unsigned long long)f.size, problem);
    greeting_drop(ctx, g);
    return;
  }
  tcp_peer *p = &ctx->peers[f.size];
  p->in_fd = g->fd;
  g->fd = -1;
  tcp_socket_tune(p->in_fd, ctx->host->timeout_ms);
  tcp_log(ctx, SMD_TRANSPORT_LOG_TRACE, "rank %d connected", p->rank);
  greeting_drop(ctx, g);
}

void tcp_greetings_expire(tcp_ctx *ctx) {
  int64_t now = tcp_now_ms();
  tcp_greeting *g = ctx->greetings;
  while (g != NULL) {
    tcp_greeting *next = g->next;
    if (now > g->deadline_ms) {
      tcp_log(ctx, SMD_TRANSPORT_LOG_WARN, "dropped a connection that sent no HELLO in %d s",
              TCP_GREETING_MS / 1000);
      greeting_drop(ctx, g);
    }
    g = next;
  }
}
