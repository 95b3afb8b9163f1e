// connect and disconnect: map a peer's region and pair our rings with it.
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "address.h"
#include "arg_checks.h"
#include "context.h"

namespace smd_shm {

static Status map_peer(Context *ctx, Endpoint *ep, const AddressBlob &a) {
  char name[64];
  shared_name(name, sizeof name, "shm", a.region_id);
  FileError e = open_shared(a.pid, a.region_fd, name, a.region_bytes, &ep->peer_region, nullptr);
  if (e) {
    if (e.err == EACCES || e.err == EPERM)
      return fail(ctx, SMD_TRANSPORT_ERR_SYSTEM,
                  "shm: cannot map rank %d's region /proc/%d/fd/%d: %s "
                  "(ranks on a node must run as the same user and be dumpable)",
                  ep->peer, a.pid, a.region_fd, strerror(e.err));
    if (e.err == ENOENT || e.err == ESRCH || e.err == ESTALE)
      return fail(ctx, SMD_TRANSPORT_ERR_PEER,
                  "shm: rank %d (pid %d) no longer holds its region "
                  "/proc/%d/fd/%d (%s): has it exited?",
                  ep->peer, a.pid, a.pid, a.region_fd, e.step);
    return fail(ctx, SMD_TRANSPORT_ERR_SYSTEM,
                "shm: cannot map rank %d's region /proc/%d/fd/%d (%s: %s)", ep->peer, a.pid,
                a.region_fd, e.step, strerror(e.err));
  }
  auto *h = static_cast<RegionHeader *>(ep->peer_region.base());
  if (load_acquire(h->magic) != kRegionMagic || h->region_id != a.region_id || h->pid != a.pid ||
      h->local_size != uint32_t(ctx->local_size))
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                "shm: region of rank %d (pid %d) has an unexpected header", ep->peer, a.pid);
  ep->peer_hdr = h;
  ep->out = region_ring(ep->peer_region.base(), uint32_t(ctx->local_rank));
  return SMD_TRANSPORT_OK;
}

static Status open_pidfd(Context *ctx, Endpoint *ep) {
  ep->pidfd = int(syscall(SYS_pidfd_open, ep->pid, 0));  // always CLOEXEC
  if (ep->pidfd >= 0) return SMD_TRANSPORT_OK;
  if (errno == ESRCH)
    return fail(ctx, SMD_TRANSPORT_ERR_PEER, "shm: rank %d (pid %d) is not running", ep->peer,
                ep->pid);
  if (errno == ENOSYS) {  // before Linux 5.3: liveness falls back to kill(0)
    log_line(ctx, SMD_TRANSPORT_LOG_INFO,
             "shm: pidfd_open unavailable; watching pid %d with kill(0)", ep->pid);
    return SMD_TRANSPORT_OK;
  }
  return fail(ctx, SMD_TRANSPORT_ERR_SYSTEM, "shm: pidfd_open(%d) for rank %d failed: %s", ep->pid,
              ep->peer, strerror(errno));
}

Status endpoint_connect(Context *ctx, int32_t peer, const void *address, size_t size, void **out) {
  if (Status s = smd_plugin::check_connect_args(ctx, "shm", peer, out)) return s;
  AddressBlob a;
  char why[400];
  if (!check_address(address, size, ctx->node, ctx->local_size, &a, why, sizeof why))
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID, "shm: cannot connect to rank %d: %s", peer, why);
  bool self = a.pid == int32_t(ctx->pid) && a.region_id == ctx->region_id;
  if (self != (peer == ctx->rank))
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                self ? "shm: connect: the address for rank %d is this "
                       "process's own"
                     : "shm: connect: rank %d is this process, but the "
                       "address is another's",
                peer);
  if (!self && a.local_rank == ctx->local_rank)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                "shm: connect: rank %d claims local rank %d, which is this "
                "process's",
                peer, a.local_rank);
  if (ctx->by_local[size_t(a.local_rank)] != nullptr)
    return fail(ctx, SMD_TRANSPORT_ERR_INVALID,
                "shm: connect: already connected to local rank %d (rank %d)", a.local_rank,
                ctx->by_local[size_t(a.local_rank)]->peer);

  auto ep = std::make_unique<Endpoint>();
  ep->magic = kEndpointMagic;
  ep->ctx = ctx;
  ep->peer = peer;
  ep->peer_local = a.local_rank;
  ep->pid = a.pid;
  ep->self = self;
  ep->cma = ctx->cma;
  if (self) {
    ep->peer_hdr = ctx->hdr;
    ep->out = region_ring(ctx->region.base(), uint32_t(ctx->local_rank));
  } else {
    // pidfd first: if the pid were reused after it, the region check in
    // map_peer would catch the impostor, so the pidfd is the peer's.
    if (Status s = open_pidfd(ctx, ep.get())) return s;
    if (Status s = map_peer(ctx, ep.get(), a)) {
      if (ep->pidfd >= 0) close(ep->pidfd);
      return s;
    }
  }
  ep->in = region_ring(ctx->region.base(), uint32_t(a.local_rank));
  ep->out_head = ep->out_published = load_acquire(ep->out->head);
  ep->out_tail = load_acquire(ep->out->tail);
  ep->in_tail = load_relaxed(ep->in->tail);

  ctx->by_local[size_t(a.local_rank)] = ep.get();
  ctx->endpoints.push_back(ep.get());
  *out = ep.release();
  return SMD_TRANSPORT_OK;
}

void endpoint_destroy(Context *ctx, Endpoint *ep) {
  while (Unexpected *u = ep->unexpected.take_any()) {
    free(u->data);
    delete u;
  }
  // Finalize drops requests; disconnect has completed them already.
  while (Request *r = ep->pending.head) {
    request_unlink(ctx, r);
    ep->pending.remove(r);
    r->phase = Phase::kDone;
    r->ep = nullptr;
    --ctx->unfinished;
  }
  auto erase = [ep](std::vector<Endpoint *> &v) {
    v.erase(std::remove(v.begin(), v.end(), ep), v.end());
  };
  erase(ctx->endpoints);
  erase(ctx->senders);
  ctx->by_local[size_t(ep->peer_local)] = nullptr;
  if (ep->pidfd >= 0) close(ep->pidfd);
  ep->magic = 0;
  delete ep;
}

Status endpoint_disconnect(Context *ctx, Endpoint *ep) {
  while (Request *r = ep->pending.head) {
    request_unlink(ctx, r);
    r->error = "shm: endpoint disconnected";
    request_complete(ctx, r, SMD_TRANSPORT_ERR_CANCELED, 0);
  }
  endpoint_destroy(ctx, ep);
  return SMD_TRANSPORT_OK;
}

}  // namespace smd_shm
