/* entry.c - the plugin's one exported symbol and its table.
 *
 * The core dlopen()s libsmd-transport-tcp.so (RTLD_NOW | RTLD_LOCAL),
 * looks up smd_transport_plugin_v1, calls it, and checks the table it
 * returns: abi_version, struct_size, a name, every required entry set,
 * and that capabilities come with the entries they need. Only then does
 * it call init(). docs/PLUGINS.md has the whole contract; the rules each
 * entry follows are at the top of the file that implements it.
 *
 * What this file adds to every entry: it checks the handles it is given.
 * A context, endpoint or request of another plugin (or a stale one) must
 * give ERR_INVALID with a message, not a crash. The magic numbers catch
 * mix-ups; a handle to freed memory is a bug in the caller that no check
 * can catch reliably (the core never passes one).
 *
 * Capabilities: none. Not THREAD_SAFE, so the core never calls into one
 * context from two threads at once and the plugin needs no locks. No
 * REGISTRATION_REQUIRED: TCP reads and writes any memory, mr is ignored.
 * No RMA and no SEGMENTS: the optional entries for them are NULL. Not
 * INTRA_NODE_ONLY: this is a network transport.
 *
 * The entries appended to v1 since its first version: context_caps is
 * NULL (the caps above hold in every context); probe says how suitable
 * plain TCP is here (a low priority: the fallback when no fabric plugin
 * is usable); params lists the one variable this plugin reads, so that
 * `smd-info params` shows it. A core older than these entries never reads
 * them (it knows a shorter table), so the plugin loads there too.
 */
#include "tcp.h" /* first: it selects the system interfaces (_GNU_SOURCE) */

#include <stdio.h>

static tcp_ctx *as_ctx(void *c) {
  tcp_ctx *ctx = (tcp_ctx *)c;
  return ctx != NULL && ctx->magic == TCP_CTX_MAGIC ? ctx : NULL;
}

static tcp_peer *as_peer(tcp_ctx *ctx, void *e) {
  tcp_peer *p = (tcp_peer *)e;
  return p != NULL && p->magic == TCP_PEER_MAGIC && p->ctx == ctx && p->connected ? p : NULL;
}

/* A request the core still owns: not yet reported done, not cancelled. */
static tcp_request *as_request(tcp_ctx *ctx, void *q) {
  tcp_request *r = (tcp_request *)q;
  return r != NULL && r->magic == TCP_REQ_MAGIC && r->ctx == ctx && !r->cancelled ? r : NULL;
}

/* mem_register's answer: TCP needs no registration, but callers that
 * register anyway get a handle they can pass back. */
static char registration_token;

static tcp_status tcp_init(const smd_transport_host_t *host, void **ctx) {
  return tcp_context_init(host, ctx);
}

static tcp_status tcp_finalize(void *c) {
  tcp_ctx *ctx = as_ctx(c);
  if (ctx == NULL) return SMD_TRANSPORT_ERR_INVALID;
  return tcp_context_finalize(ctx);
}

static tcp_status tcp_get_address(void *c, void *buf, size_t *size) {
  tcp_ctx *ctx = as_ctx(c);
  if (ctx == NULL) return SMD_TRANSPORT_ERR_INVALID;
  return tcp_context_address(ctx, buf, size);
}

static tcp_status tcp_connect(void *c, int32_t peer, const void *address, size_t size,
                              void **endpoint) {
  tcp_ctx *ctx = as_ctx(c);
  if (ctx == NULL) return SMD_TRANSPORT_ERR_INVALID;
  if (endpoint == NULL)
    return tcp_fail(ctx, SMD_TRANSPORT_ERR_INVALID, "tcp: connect: endpoint is NULL");
  return tcp_endpoint_connect(ctx, peer, address, size, endpoint);
}

static tcp_status tcp_disconnect(void *c, void *e) {
  tcp_ctx *ctx = as_ctx(c);
  if (ctx == NULL) return SMD_TRANSPORT_ERR_INVALID;
  tcp_peer *p = as_peer(ctx, e);
  if (p == NULL)
    return tcp_fail(ctx, SMD_TRANSPORT_ERR_INVALID, "tcp: disconnect: not an endpoint");
  return tcp_endpoint_disconnect(ctx, p);
}

static tcp_status tcp_mem_register(void *c, void *ptr, size_t size, uint32_t flags, void **mr) {
  tcp_ctx *ctx = as_ctx(c);
  if (ctx == NULL) return SMD_TRANSPORT_ERR_INVALID;
  (void)ptr, (void)size, (void)flags;
  if (mr == NULL) return tcp_fail(ctx, SMD_TRANSPORT_ERR_INVALID, "tcp: mem_register: mr is NULL");
  *mr = &registration_token;
  return SMD_TRANSPORT_OK;
}

static tcp_status tcp_mem_deregister(void *c, void *mr) {
  tcp_ctx *ctx = as_ctx(c);
  if (ctx == NULL) return SMD_TRANSPORT_ERR_INVALID;
  if (mr != &registration_token)
    return tcp_fail(ctx, SMD_TRANSPORT_ERR_INVALID, "tcp: mem_deregister: not a registration");
  return SMD_TRANSPORT_OK;
}

static tcp_status tcp_isend(void *c, void *e, const void *buf, size_t size, void *mr, uint64_t tag,
                            void **request) {
  tcp_ctx *ctx = as_ctx(c);
  if (ctx == NULL) return SMD_TRANSPORT_ERR_INVALID;
  (void)mr;
  tcp_peer *p = as_peer(ctx, e);
  if (p == NULL) return tcp_fail(ctx, SMD_TRANSPORT_ERR_INVALID, "tcp: isend: not an endpoint");
  if (request == NULL || (buf == NULL && size > 0))
    return tcp_fail(ctx, SMD_TRANSPORT_ERR_INVALID, "tcp: isend: %s is NULL",
                    request == NULL ? "request" : "buf");
  return tcp_send_start(ctx, p, buf, size, tag, request);
}

static tcp_status tcp_irecv(void *c, void *e, void *buf, size_t size, void *mr, uint64_t tag,
                            void **request) {
  tcp_ctx *ctx = as_ctx(c);
  if (ctx == NULL) return SMD_TRANSPORT_ERR_INVALID;
  (void)mr;
  tcp_peer *p = as_peer(ctx, e);
  if (p == NULL) return tcp_fail(ctx, SMD_TRANSPORT_ERR_INVALID, "tcp: irecv: not an endpoint");
  if (request == NULL || (buf == NULL && size > 0))
    return tcp_fail(ctx, SMD_TRANSPORT_ERR_INVALID, "tcp: irecv: %s is NULL",
                    request == NULL ? "request" : "buf");
  return tcp_recv_start(ctx, p, buf, size, tag, request);
}

static tcp_status tcp_test(void *c, void *request, int *done, size_t *size) {
  tcp_ctx *ctx = as_ctx(c);
  if (ctx == NULL) return SMD_TRANSPORT_ERR_INVALID;
  tcp_request *r = as_request(ctx, request);
  if (r == NULL || done == NULL)
    return tcp_fail(ctx, SMD_TRANSPORT_ERR_INVALID, "tcp: test: %s",
                    r == NULL ? "not a live request" : "done is NULL");
  return tcp_request_test(ctx, r, done, size);
}

static tcp_status tcp_cancel(void *c, void *request) {
  tcp_ctx *ctx = as_ctx(c);
  if (ctx == NULL) return SMD_TRANSPORT_ERR_INVALID;
  tcp_request *r = as_request(ctx, request);
  if (r == NULL) return tcp_fail(ctx, SMD_TRANSPORT_ERR_INVALID, "tcp: cancel: not a live request");
  return tcp_request_cancel(ctx, r);
}

static tcp_status tcp_progress_entry(void *c) {
  tcp_ctx *ctx = as_ctx(c);
  if (ctx == NULL) return SMD_TRANSPORT_ERR_INVALID;
  return tcp_progress(ctx, 0);
}

static tcp_status tcp_wait(void *c, int64_t timeout_us) {
  tcp_ctx *ctx = as_ctx(c);
  if (ctx == NULL) return SMD_TRANSPORT_ERR_INVALID;
  return tcp_progress(ctx, timeout_us);
}

static tcp_status tcp_check_peer(void *c, void *e) {
  tcp_ctx *ctx = as_ctx(c);
  if (ctx == NULL) return SMD_TRANSPORT_ERR_INVALID;
  tcp_peer *p = as_peer(ctx, e);
  if (p == NULL)
    return tcp_fail(ctx, SMD_TRANSPORT_ERR_INVALID, "tcp: check_peer: not an endpoint");
  /* The core may ask about a peer it has nothing pending with; a pass of
   * the engine (one poll, no waiting) is what notices a closed socket. */
  tcp_progress(ctx, 0);
  if (p->dead || p->out_broken)
    return tcp_fail(ctx, SMD_TRANSPORT_ERR_PEER, "tcp: rank %d: %s", p->rank, p->why);
  return SMD_TRANSPORT_OK;
}

/* probe: priority for SMD_TRANSPORT=auto, which tries network plugins
 * from the highest down. Called before init, so it may only look around
 * (files, variables): TCP works wherever sockets do, and every fabric
 * plugin should win over it. */
static int32_t tcp_probe(const smd_transport_host_t *host, char *why, size_t why_size) {
  (void)host;
  snprintf(why, why_size, "plain TCP sockets: the portable fallback");
  return 10;
}

/* params: every variable the plugin reads through host->get_param. */
static const smd_transport_param_t kParams[] = {
    {"SMD_TCP_ADDR", "string", "",
     "IPv4 address, interface name (eth0, lo; a prefix like eth takes the first match, =eth0 "
     "only that name) or host name the tcp transport advertises to peers and listens on (see "
     "SMD_TCP_BIND); default: 127.0.0.1 when the world is one node, else the host name's address, "
     "else the first interface that is up."},
    {"SMD_TCP_BIND", "string", "advertised",
     "Where the tcp transport listens: 'advertised' (only the address peers dial, see "
     "SMD_TCP_ADDR) or 'any' (every interface, 0.0.0.0)."},
    {NULL, NULL, NULL, NULL},
};

/* Designated initializers name every entry, so the table reads as the
 * ABI does; entries not named are NULL (optional, not offered here). */
static const smd_transport_v1_t kTable = {
    .struct_size = sizeof(smd_transport_v1_t),
    .abi_version = SMD_TRANSPORT_ABI_VERSION,
    .name = "tcp",
    .description = "plain TCP sockets: one-way connection per peer, eager and rendezvous frames",
    .caps = 0,
    .init = tcp_init,
    .finalize = tcp_finalize,
    .get_address = tcp_get_address,
    .connect = tcp_connect,
    .disconnect = tcp_disconnect,
    .mem_register = tcp_mem_register,
    .mem_deregister = tcp_mem_deregister,
    .isend = tcp_isend,
    .irecv = tcp_irecv,
    .test = tcp_test,
    .cancel = tcp_cancel,
    .progress = tcp_progress_entry,
    .wait = tcp_wait,
    .check_peer = tcp_check_peer,
    .mem_pack = NULL,
    .iget = NULL,
    .segment_create = NULL,
    .segment_attach = NULL,
    .segment_release = NULL,
    .context_caps = NULL,
    .probe = tcp_probe,
    .params = kParams,
};

/* The entry symbol: the only name the plugin exports. The table is
 * constant and static, valid until the plugin is unloaded. */
__attribute__((visibility("default"))) const smd_transport_v1_t *smd_transport_plugin_v1(void) {
  return &kTable;
}
