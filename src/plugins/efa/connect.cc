// connect and disconnect: a peer is an address-vector entry made from its
// published endpoint name, plus the socket that watches it.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <sched.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "address.h"
#include "arg_checks.h"
#include "context.h"

namespace smd_efa {

static socklen_t peer_live_addr(const AddressHeader &h, struct sockaddr_storage *ss) {
  memset(ss, 0, sizeof *ss);
  if (h.live_family == AF_INET) {
    sockaddr_in in{
        .sin_family = AF_INET, .sin_port = htons(h.live_port), .sin_addr = {}, .sin_zero = {}};
    memcpy(&in.sin_addr, h.live_ip, sizeof in.sin_addr);
    memcpy(ss, &in, sizeof in);
    return sizeof in;
  }
  if (h.live_family == AF_INET6) {
    sockaddr_in6 in6{.sin6_family = AF_INET6,
                     .sin6_port = htons(h.live_port),
                     .sin6_flowinfo = 0,
                     .sin6_addr = {},
                     .sin6_scope_id = 0};
    memcpy(&in6.sin6_addr, h.live_ip, sizeof in6.sin6_addr);
    memcpy(ss, &in6, sizeof in6);
    return sizeof in6;
  }
  return 0;
}

Status endpoint_connect(Context *ctx, int32_t peer, const void *address, size_t size, void **out) {
  if (Status s = smd_plugin::check_connect_args(ctx, "efa", peer, out)) return s;
  PeerAddress a;
  char why[200];
  if (!parse_address(address, size, &a, why, sizeof why))
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "efa: cannot connect to rank %d: %s", peer, why);
  const AddressHeader &h = a.header;
  if (h.rank != peer || h.world_size != ctx->world_size)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                "efa: connect: the address given for rank %d of %d is rank "
                "%d's of %d",
                peer, ctx->world_size, h.rank, h.world_size);
  if (ctx->prov.name != h.provider || h.addr_format != ctx->info->addr_format)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                "efa: rank %d uses provider %s, this rank %s: set the same "
                "SMD_EFA_PROVIDER everywhere",
                peer, h.provider, ctx->prov.name.c_str());

  auto ep = std::make_unique<Endpoint>();
  ep->magic = kEndpointMagic;
  ep->ctx = ctx;
  ep->peer = peer;
  int n = fi_av_insert(ctx->av, a.name, 1, &ep->addr, 0, nullptr);
  if (n != 1)
    return fail(ctx, SMD_TRANSPORT_ERR_SYSTEM,
                "efa: inserting rank %d's address into the address vector "
                "failed: %s",
                peer, n < 0 ? fi_strerror(-n) : "not inserted");
  Endpoint *e = ep.release();
  ctx->endpoints.push_back(e);
  e->pid = h.pid;
  if (peer != ctx->rank) remember_region(ctx, e, a.name, h.name_len);
  if (peer != ctx->rank) cma_probe(ctx, e, h.pid, h.nonce_addr, h.nonce);
  if (ctx->prov.framed) frames_open(ctx, e);
  struct sockaddr_storage ss;
  socklen_t len = peer_live_addr(h, &ss);
  if (len != 0 && peer != ctx->rank)
    liveness_watch(ctx, e, reinterpret_cast<struct sockaddr *>(&ss), len, h.nonce);
  *out = e;
  return SMD_TRANSPORT_OK;
}

// Before the first connection closes at teardown: a send the provider
// reported complete may still sit in its own queue (tcp;ofi_rxm writes it to
// the socket during progress), and bytes peers sent that nobody read make
// the kernel reset the connection on close, dropping what was not yet sent.
// So progress runs on until nothing happened for a while (bounded).
constexpr uint64_t kFlushQuietNs = 10'000'000;
constexpr uint64_t kFlushMaxNs = 100'000'000;

static void flush_before_close(Context *ctx) {
  if (ctx->flushed) return;
  ctx->flushed = true;
  uint64_t start = monotonic_ns(), quiet_since = start;
  for (uint64_t now = start; now - start < kFlushMaxNs && now - quiet_since < kFlushQuietNs;
       now = monotonic_ns()) {
    uint64_t seen = ctx->events;
    progress(ctx);
    if (ctx->events != seen) quiet_since = monotonic_ns();
    else sched_yield();
  }
}

Status endpoint_disconnect(Context *ctx, Endpoint *ep) {
  flush_before_close(ctx);
  // The caller may still test() them: they finish, CANCELED.
  while (Request *r = ep->pending.head)
    request_stop(ctx, r, SMD_TRANSPORT_ERR_CANCELED, "efa: endpoint disconnected", true);
  frames_close(ctx, ep);
  liveness_unwatch(ep);
  ep->disconnected = true;
  endpoint_reap(ctx, ep);
  return SMD_TRANSPORT_OK;
}

void endpoint_reap(Context *ctx, Endpoint *ep) {
  if (!ep->disconnected || ep->owned != 0) return;
  // The provider holds nothing that names this peer: drop its entry (a
  // connection-oriented provider closes its connection).
  fi_av_remove(ctx->av, &ep->addr, 1, 0);
  reclaim_region(ctx, ep);
  auto drop = [ep](std::vector<Endpoint *> &v) {
    v.erase(std::remove(v.begin(), v.end(), ep), v.end());
  };
  drop(ctx->endpoints);
  drop(ctx->backlog);
  ep->magic = 0;
  delete ep;
}

}  // namespace smd_efa
