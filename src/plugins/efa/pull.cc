// Pulled messages and reads between processes of one machine, on a framed
// provider (shm). libfabric 1.17's shm completes every large transfer
// through a response queue that it reads strictly in order: one transfer
// towards a peer that died never gets its response and blocks every later
// completion of the process, towards anyone. So large transfers bypass the
// provider's data path: the sender injects a kPull frame naming where its
// payload lies; the receiver whose receive matches it copies the payload
// straight out of the sender's memory (process_vm_readv) and injects a
// kAck frame back, which finishes the send. Injected frames need no
// response, and a copy from a dead process fails at once (ESRCH). iget
// reads the same way, inside the call.
//
// A peer is read this way only once connect has read its nonce out of its
// memory (cma_probe): the same machine, and permission to read it.
#include <errno.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <sys/uio.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "context.h"
#include "framing.h"

namespace smd_efa {

namespace {

// Reads n bytes at `remote` in process pid into `local`; 0 or an errno.
int cma_read(int32_t pid, void *local, uint64_t remote, size_t n) {
  size_t done = 0;
  while (done < n) {
    struct iovec l = {static_cast<char *>(local) + done, n - done};
    struct iovec r = {reinterpret_cast<void *>(uintptr_t(remote + done)), n - done};
    ssize_t got = process_vm_readv(pid, &l, 1, &r, 1, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return errno;
    if (got == 0) return EFAULT;
    done += size_t(got);
  }
  return 0;
}

Status status_of_cma_error(int err) {
  switch (err) {
    case ESRCH: return SMD_TRANSPORT_ERR_PEER;  // the process is gone
    case EFAULT: return SMD_TRANSPORT_ERR_INVALID;
    case ENOMEM: return SMD_TRANSPORT_ERR_NO_MEMORY;
    default: return SMD_TRANSPORT_ERR_SYSTEM;
  }
}

}  // namespace

void cma_probe(Context *ctx, Endpoint *ep, int32_t pid, uint64_t nonce_addr, uint64_t nonce) {
  ep->cma = false;
  if (!ctx->prov.framed || pid <= 0 || nonce_addr == 0) return;
  uint64_t seen = 0;
  int err = cma_read(pid, &seen, nonce_addr, sizeof seen);
  ep->cma = err == 0 && seen == nonce;
  if (!ep->cma)
    log_line(ctx, SMD_TRANSPORT_LOG_INFO,
             "efa: cannot read rank %d's memory (%s): its large messages travel "
             "through the provider, which hangs if a peer dies mid-transfer",
             ep->peer, err != 0 ? strerror(err) : "another process answers to its pid");
}

void pull_deliver(Context *ctx, Request *r, const FrameHeader &h) {
  Endpoint *ep = r->ep;
  size_t n = std::min<size_t>(h.size, r->size);
  int err = n == 0 ? 0 : cma_read(ep->pid, r->buf, h.addr, n);
  Status s = err == 0 ? SMD_TRANSPORT_OK : status_of_cma_error(err);
  if (s != SMD_TRANSPORT_ERR_PEER) ack_send(ctx, ep, h.cookie, s);
  if (err != 0) {
    char text[300];
    snprintf(text, sizeof text, "efa: reading a %llu-byte message out of rank %d failed: %s",
             (unsigned long long)h.size, ep->peer, strerror(err));
    r->error = text;
    request_finish(ctx, r, s, 0);
  } else if (h.size > r->size) {
    finish_truncated(ctx, r, size_t(h.size));
  } else {
    request_finish(ctx, r, SMD_TRANSPORT_OK, n);
  }
}

void pull_acked(Context *ctx, Endpoint *ep, const FrameHeader &h) {
  auto it = ctx->pulls.find(h.cookie);
  if (it == ctx->pulls.end() || it->second->ep != ep) return;  // cancelled meanwhile
  Request *r = it->second;
  ctx->pulls.erase(it);
  Status s = Status(h.status);
  if (s != SMD_TRANSPORT_OK)
    r->error = "efa: rank " + std::to_string(ep->peer) + " could not read this " +
               std::to_string(r->size) + "-byte message: " + smd_transport_status_string(s);
  request_finish(ctx, r, s, s == SMD_TRANSPORT_OK ? r->size : 0);
}

void ack_send(Context *ctx, Endpoint *ep, uint64_t cookie, Status status) {
  FrameHeader h{};
  h.magic = kFrameMagic;
  h.kind = kAck;
  h.status = int32_t(status);
  h.cookie = cookie;
  ep->frames->acks_out.push_back(h);
  endpoint_backlog(ctx, ep);
  acks_flush(ctx, ep);
}

bool acks_flush(Context *ctx, Endpoint *ep) {
  if (!ep->frames) return true;
  std::deque<FrameHeader> &q = ep->frames->acks_out;
  while (!q.empty()) {
    ssize_t rc =
        fi_tinject(ctx->ep, &q.front(), sizeof(FrameHeader), ep->addr, stream_tag(ctx, ctx->rank));
    if (rc == -FI_EAGAIN) return false;
    if (rc != 0)
      log_line(ctx, SMD_TRANSPORT_LOG_WARN,
               "efa: acknowledging a pulled message to rank %d failed: %s; its send "
               "waits until the peer is found gone",
               ep->peer, fi_strerror(int(-rc)));
    q.pop_front();
  }
  return true;
}

void cma_get(Context *ctx, Request *r, uint64_t remote) {
  int err = r->size == 0 ? 0 : cma_read(r->ep->pid, r->buf, remote, r->size);
  if (err != 0) {
    char text[300];
    snprintf(text, sizeof text, "efa: reading %zu B at 0x%llx in rank %d failed: %s", r->size,
             (unsigned long long)remote, r->ep->peer, strerror(err));
    r->error = text;
  }
  request_finish(ctx, r, err == 0 ? SMD_TRANSPORT_OK : status_of_cma_error(err),
                 err == 0 ? r->size : 0);
}

}  // namespace smd_efa
