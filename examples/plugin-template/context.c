/* context.c - init, finalize and get_address: the life of a context.
 *
 * ABI rules this file follows:
 *   - init may fail (no usable network here); it then explains why with
 *     set_error and returns an error, and the core tries other plugins
 *     (SMD_TRANSPORT=auto) or reports the reason. It must not leave
 *     anything behind on failure.
 *   - the host record and its strings stay valid until finalize returns,
 *     so the context keeps a pointer to it instead of a copy;
 *   - host fields are read only if host->struct_size covers them (the same
 *     append-only rule as the plugin table, in the other direction);
 *   - finalize releases everything: sockets, buffers, and requests the
 *     core never tested ("pending requests are dropped").
 */
#include "tcp.h" /* first: it selects the system interfaces (_GNU_SOURCE) */

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define HOST_HAS(host, field) \
  ((host)->struct_size >= offsetof(smd_transport_host_t, field) + sizeof((host)->field))

static uint64_t random_nonce(void) {
  uint64_t n = 0;
  if (getrandom(&n, sizeof n, GRND_NONBLOCK) == (ssize_t)sizeof n && n != 0) return n;
  /* No entropy yet (early boot): unique enough for telling listeners apart. */
  return ((uint64_t)getpid() << 32) ^ (uint64_t)tcp_now_ms() ^ (uint64_t)(uintptr_t)&n;
}

tcp_status tcp_context_init(const smd_transport_host_t *host, void **out) {
  if (host == NULL || out == NULL) return SMD_TRANSPORT_ERR_INVALID;
  *out = NULL;
  if (host->abi_version != SMD_TRANSPORT_ABI_VERSION || !HOST_HAS(host, get_param))
    return tcp_fail_host(host, SMD_TRANSPORT_ERR_INVALID,
                         "tcp: host record of ABI version %u and %zu bytes is not one "
                         "this plugin knows",
                         host->abi_version, host->struct_size);
  if (host->world_size < 1 || host->rank < 0 || host->rank >= host->world_size)
    return tcp_fail_host(host, SMD_TRANSPORT_ERR_INVALID, "tcp: rank %d of a world of %d",
                         host->rank, host->world_size);

  struct in_addr addr;
  char how[200];
  tcp_status st = tcp_address_choose(host, &addr, how, sizeof how);
  if (st != SMD_TRANSPORT_OK) return st;

  tcp_ctx *ctx = calloc(1, sizeof *ctx);
  tcp_peer *peers = calloc((size_t)host->world_size, sizeof *peers);
  if (ctx == NULL || peers == NULL) {
    free(ctx);
    free(peers);
    return tcp_fail_host(host, SMD_TRANSPORT_ERR_NO_MEMORY,
                         "tcp: no memory for a world of %d ranks", host->world_size);
  }
  ctx->magic = TCP_CTX_MAGIC;
  ctx->host = host;
  ctx->rank = host->rank;
  ctx->world_size = host->world_size;
  ctx->peers = peers;
  ctx->nonce = random_nonce();
  ctx->next_send_id = 1;
  for (int r = 0; r < ctx->world_size; ++r) {
    tcp_peer *p = &peers[r];
    p->magic = TCP_PEER_MAGIC;
    p->ctx = ctx;
    p->rank = r;
    p->out_fd = -1;
    p->in_fd = -1;
  }

  /* Listen only where peers are told to dial, so the transport is not
   * open on interfaces the job does not use; SMD_TCP_BIND=any for all. */
  const char *bind_choice = host->get_param(host->host, "SMD_TCP_BIND");
  int bind_any = bind_choice != NULL && strcmp(bind_choice, "any") == 0;
  if (bind_choice != NULL && bind_choice[0] != '\0' && !bind_any &&
      strcmp(bind_choice, "advertised") != 0) {
    free(peers);
    free(ctx);
    return tcp_fail_host(host, SMD_TRANSPORT_ERR_INVALID,
                         "tcp: SMD_TCP_BIND=%s: expected 'advertised' or 'any'", bind_choice);
  }
  struct in_addr bind_addr = addr;
  if (bind_any) bind_addr.s_addr = htonl(INADDR_ANY);
  char why[160];
  uint16_t port = 0;
  if (tcp_socket_listen(bind_addr, &ctx->listen_fd, &port, why, sizeof why) != 0) {
    free(peers);
    free(ctx);
    return tcp_fail_host(host, SMD_TRANSPORT_ERR_SYSTEM, "tcp: %s", why);
  }
  tcp_address_encode(ctx->address, addr, port, ctx->nonce);
  char text[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &addr, text, sizeof text);
  snprintf(ctx->address_text, sizeof ctx->address_text, "%s:%u", text, (unsigned)port);
  int unreachable = (ntohl(addr.s_addr) >> 24) == 127 && host->node_count > 1;
  tcp_log(ctx, unreachable ? SMD_TRANSPORT_LOG_WARN : SMD_TRANSPORT_LOG_INFO,
          "listening on port %u of %s; peers dial %s (%s)", (unsigned)port,
          bind_any ? "every interface" : "that address only", ctx->address_text, how);
  *out = ctx;
  return SMD_TRANSPORT_OK;
}

tcp_status tcp_context_finalize(tcp_ctx *ctx) {
  /* Requests first: they point into the peers. */
  while (ctx->requests != NULL) tcp_request_free(ctx, ctx->requests);
  for (int r = 0; r < ctx->world_size; ++r) {
    tcp_peer *p = &ctx->peers[r];
    tcp_socket_close(&p->out_fd);
    tcp_socket_close(&p->in_fd);
    if (p->rd.ux != NULL) tcp_unexpected_free(p->rd.ux);
    tcp_tagged *t;
    while ((t = tcp_tagq_take_any(&p->unexpected)) != NULL)
      tcp_unexpected_free(TCP_CONTAINER(t, tcp_unexpected, q));
    p->magic = 0;
  }
  while (ctx->greetings != NULL) {
    tcp_greeting *g = ctx->greetings;
    ctx->greetings = g->next;
    tcp_socket_close(&g->fd);
    free(g);
  }
  tcp_socket_close(&ctx->listen_fd);
  free(ctx->slots);
  free(ctx->slot_role);
  free(ctx->slot_obj);
  free(ctx->peers);
  ctx->magic = 0;
  free(ctx);
  return SMD_TRANSPORT_OK;
}

tcp_status tcp_context_address(tcp_ctx *ctx, void *buf, size_t *size) {
  if (size == NULL)
    return tcp_fail(ctx, SMD_TRANSPORT_ERR_INVALID, "tcp: get_address: size is NULL");
  /* The size rule shared by get_address, mem_pack and segment_create: too
   * small a buffer gets ERR_INVALID and, in *size, the size needed. */
  if (buf == NULL || *size < TCP_ADDRESS_SIZE) {
    size_t given = *size;
    *size = TCP_ADDRESS_SIZE;
    return tcp_fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                    "tcp: get_address: a buffer of %zu bytes is too small; the address "
                    "needs %d",
                    buf == NULL ? 0 : given, TCP_ADDRESS_SIZE);
  }
  memcpy(buf, ctx->address, TCP_ADDRESS_SIZE);
  *size = TCP_ADDRESS_SIZE;
  return SMD_TRANSPORT_OK;
}
