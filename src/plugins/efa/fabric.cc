// init, finalize and the address blob: one fabric, domain, address vector
// (FI_AV_TABLE, one entry per connected peer), tagged completion queue
// and RDM endpoint per context.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "address.h"
#include "arg_checks.h"
#include "context.h"

namespace smd_efa {

uint64_t monotonic_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

static uint64_t random_nonce() {
  uint64_t v = 0;
  if (getrandom(&v, sizeof v, 0) != sizeof v) v = monotonic_ns() ^ (uint64_t(getpid()) << 32);
  return v | 1;  // never 0
}

static Status fi_fail(Context *ctx, const char *what, int rc) {
  return fail(ctx, status_of_fi_error(rc), "efa: %s (provider %s) failed: %s", what,
              ctx->prov.name.c_str(), fi_strerror(-rc));
}

// The completion queue, with a file descriptor to sleep on when the
// provider offers one (wait() then blocks instead of polling).
static Status open_cq(Context *ctx) {
  struct fi_cq_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.format = FI_CQ_FORMAT_TAGGED;
  attr.size = ctx->info->tx_attr->size + ctx->info->rx_attr->size;
  attr.wait_obj = FI_WAIT_FD;
  int rc = fi_cq_open(ctx->domain, &attr, &ctx->cq, nullptr);
  if (rc == 0) {
    rc = fi_control(&ctx->cq->fid, FI_GETWAIT, &ctx->wait_fd);
    if (rc == 0 && ctx->wait_fd >= 0) {
      ctx->prov.wait_fd = true;
      return SMD_TRANSPORT_OK;
    }
    fi_close(&ctx->cq->fid);
    ctx->cq = nullptr;
    ctx->wait_fd = -1;
  }
  attr.wait_obj = FI_WAIT_NONE;
  rc = fi_cq_open(ctx->domain, &attr, &ctx->cq, nullptr);
  if (rc != 0) return fi_fail(ctx, "fi_cq_open", rc);
  return SMD_TRANSPORT_OK;
}

static Status open_fabric(Context *ctx) {
  struct fi_info *info = ctx->info;
  int rc = fi_fabric(info->fabric_attr, &ctx->fabric, nullptr);
  if (rc != 0) return fi_fail(ctx, "fi_fabric", rc);
  rc = fi_domain(ctx->fabric, info, &ctx->domain, nullptr);
  if (rc != 0) return fi_fail(ctx, "fi_domain", rc);
  struct fi_av_attr av;
  memset(&av, 0, sizeof av);
  av.type = FI_AV_TABLE;
  av.count = size_t(ctx->world_size);
  rc = fi_av_open(ctx->domain, &av, &ctx->av, nullptr);
  if (rc != 0) return fi_fail(ctx, "fi_av_open", rc);
  if (Status s = open_cq(ctx)) return s;
  rc = fi_endpoint(ctx->domain, info, &ctx->ep, nullptr);
  if (rc != 0) return fi_fail(ctx, "fi_endpoint", rc);
  rc = fi_ep_bind(ctx->ep, &ctx->av->fid, 0);
  if (rc != 0) return fi_fail(ctx, "binding the address vector", rc);
  rc = fi_ep_bind(ctx->ep, &ctx->cq->fid, FI_TRANSMIT | FI_RECV);
  if (rc != 0) return fi_fail(ctx, "binding the completion queue", rc);
  rc = fi_enable(ctx->ep);
  if (rc != 0) return fi_fail(ctx, "fi_enable", rc);
  size_t len = 0;
  rc = fi_getname(&ctx->ep->fid, nullptr, &len);
  if (rc != -FI_ETOOSMALL && rc != 0) return fi_fail(ctx, "fi_getname", rc);
  if (len == 0 || len > kMaxEndpointName)
    return fail(ctx, SMD_TRANSPORT_ERR_SYSTEM, "efa: provider %s endpoint name of %zu B",
                ctx->prov.name.c_str(), len);
  ctx->name.resize(len);
  rc = fi_getname(&ctx->ep->fid, ctx->name.data(), &len);
  if (rc != 0) return fi_fail(ctx, "fi_getname", rc);
  ctx->name.resize(len);
  return SMD_TRANSPORT_OK;
}

// Closes whatever init opened, in reverse order.
static void close_all(Context *ctx) {
  for (Endpoint *ep : ctx->endpoints) {
    liveness_unwatch(ep);
    reclaim_region(ctx, ep);
    ep->magic = 0;
    delete ep;
  }
  ctx->endpoints.clear();
  liveness_close(ctx);
  // The endpoint goes first: no operation holds a registration after it.
  if (ctx->ep != nullptr) fi_close(&ctx->ep->fid);
  for (Registration *r : ctx->registrations) {
    if (r->mr != nullptr) fi_close(&r->mr->fid);
    r->magic = 0;
    delete r;
  }
  ctx->registrations.clear();
  ctx->pool.each_live([ctx](Request *r) { frame_release(ctx, r); });
  for (char *b : ctx->bounces) free(b);
  ctx->bounces.clear();
  if (ctx->cq != nullptr) fi_close(&ctx->cq->fid);
  if (ctx->av != nullptr) fi_close(&ctx->av->fid);
  if (ctx->domain != nullptr) fi_close(&ctx->domain->fid);
  if (ctx->fabric != nullptr) fi_close(&ctx->fabric->fid);
  if (ctx->info != nullptr) fi_freeinfo(ctx->info);
  ctx->ep = nullptr;
  ctx->cq = nullptr;
  ctx->av = nullptr;
  ctx->domain = nullptr;
  ctx->fabric = nullptr;
  ctx->info = nullptr;
}

Status context_init(const smd_transport_host_t *host, void **out) {
  if (Status s = smd_plugin::check_init_args(host, "efa", out)) return s;
  auto *ctx = smd_plugin::new_context<Context>(host);
  ctx->node_count = host->node_count > 0 ? host->node_count : 1;
  ctx->nonce = random_nonce();
  Status s = read_config(ctx, &ctx->cfg);
  if (s == SMD_TRANSPORT_OK) s = select_provider(ctx, &ctx->info);
  if (s == SMD_TRANSPORT_OK) ctx->frame_out.resize(ctx->prov.frame);
  if (s == SMD_TRANSPORT_OK) s = open_fabric(ctx);
  if (s == SMD_TRANSPORT_OK && ctx->cfg.liveness) s = liveness_open(ctx);
  if (s != SMD_TRANSPORT_OK) {
    close_all(ctx);
    delete ctx;
    return s;
  }
  log_line(ctx, SMD_TRANSPORT_LOG_INFO,
           "efa: endpoint of %zu B on %s; completion queue %s; liveness %s", ctx->name.size(),
           ctx->prov.name.c_str(), ctx->prov.wait_fd ? "with a wait fd" : "polled (no wait fd)",
           ctx->live.listen_fd >= 0 ? "socket on" : "off");
  *out = ctx;
  return SMD_TRANSPORT_OK;
}

Status context_finalize(Context *ctx) {
  if (size_t n = ctx->pool.in_use())
    log_line(ctx, SMD_TRANSPORT_LOG_TRACE, "efa: finalize drops %zu requests", n);
  close_all(ctx);
  ctx->magic = 0;
  delete ctx;
  return SMD_TRANSPORT_OK;
}

Status context_address(Context *ctx, void *buf, size_t *size) {
  size_t need = sizeof(AddressHeader) + ctx->name.size();
  if (Status s = smd_plugin::check_address_room(ctx, "efa", buf, size, need)) return s;
  AddressHeader h;
  memset(&h, 0, sizeof h);
  h.magic = kAddressMagic;
  h.version = kAddressVersion;
  h.name_len = uint16_t(ctx->name.size());
  h.rank = ctx->rank;
  h.world_size = ctx->world_size;
  h.nonce = ctx->nonce;
  h.addr_format = ctx->info->addr_format;
  if (ctx->live.listen_fd >= 0) {
    const auto *sa = reinterpret_cast<const struct sockaddr *>(&ctx->live.addr);
    h.live_family = sa->sa_family;
    if (sa->sa_family == AF_INET) {
      const auto *in = reinterpret_cast<const struct sockaddr_in *>(sa);
      h.live_port = ntohs(in->sin_port);
      memcpy(h.live_ip, &in->sin_addr, 4);
    } else {
      const auto *in6 = reinterpret_cast<const struct sockaddr_in6 *>(sa);
      h.live_port = ntohs(in6->sin6_port);
      memcpy(h.live_ip, &in6->sin6_addr, 16);
    }
  }
  snprintf(h.provider, sizeof h.provider, "%s", ctx->prov.name.c_str());
  h.pid = int32_t(getpid());
  h.nonce_addr = uint64_t(reinterpret_cast<uintptr_t>(&ctx->nonce));
  memcpy(buf, &h, sizeof h);
  memcpy(static_cast<char *>(buf) + sizeof h, ctx->name.data(), ctx->name.size());
  *size = need;
  return SMD_TRANSPORT_OK;
}

}  // namespace smd_efa
