// Receiving: irecv against the unexpected queue, and the consumer side of
// the inbound rings, which matches arriving messages against posted
// receives (exact tag, FIFO per tag) or keeps them as unexpected.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "context.h"
#include "ring_producer.h"

namespace smd_shm {

// Completes a receive of a msg_size-byte message of which `copied` bytes
// landed in the buffer.
void recv_finish(Context *ctx, Request *r, uint64_t msg_size, uint64_t copied) {
  if (msg_size <= r->size) {
    request_complete(ctx, r, SMD_TRANSPORT_OK, copied);
    return;
  }
  char text[200];
  snprintf(text, sizeof text,
           "shm: message of %llu bytes from rank %d truncated to the %zu-byte "
           "receive",
           (unsigned long long)msg_size, r->ep->peer, r->size);
  r->error = text;
  request_complete(ctx, r, SMD_TRANSPORT_ERR_TRUNCATED, copied);
}

// Copies up to `want` bytes of the eager message whose first cell is
// `first` (its cells are consecutive).
static void copy_cells(Ring *ring, uint64_t first, char *dst, uint64_t want) {
  uint64_t off = 0;
  for (uint64_t k = first; off < want; ++k) {
    const Cell *c = ring_cell(ring, k);
    uint64_t take = c->h.len < want - off ? c->h.len : want - off;
    memcpy(dst + off, c->payload, take);
    off += take;
  }
}

// Returns the cells consumed; 0 means "try again later" (out of memory).
static uint32_t on_eager(Context *ctx, Endpoint *ep, uint64_t first) {
  const CellHeader &h = ring_cell(ep->in, first)->h;
  uint32_t n = cells_for(h.size);
  if (Request *r = ep->posted.pop(h.tag)) {
    uint64_t want = h.size < r->size ? h.size : r->size;
    copy_cells(ep->in, first, r->buf, want);
    recv_finish(ctx, r, h.size, want);
    return n;
  }
  auto *u = new (std::nothrow) Unexpected;
  if (u == nullptr) return 0;
  if (h.size != 0 && (u->data = static_cast<char *>(malloc(h.size))) == nullptr) {
    delete u;
    return 0;
  }
  u->tag = h.tag;
  u->size = h.size;
  copy_cells(ep->in, first, u->data, h.size);
  ep->unexpected.push(u);
  return n;
}

static uint32_t on_rts(Context *ctx, Endpoint *ep, const Cell *c) {
  uint64_t addr;
  memcpy(&addr, c->payload, sizeof addr);
  if (Request *r = ep->posted.pop(c->h.tag)) {
    rendezvous_match(ctx, r, c->h.id, addr, c->h.size);
    return 1;
  }
  auto *u = new (std::nothrow) Unexpected;
  if (u == nullptr) return 0;
  u->tag = c->h.tag;
  u->size = c->h.size;
  u->rendezvous = true;
  u->send_id = c->h.id;
  u->addr = addr;
  ep->unexpected.push(u);
  return 1;
}

static uint32_t handle_cell(Context *ctx, Endpoint *ep, uint64_t index) {
  const Cell *c = ring_cell(ep->in, index);
  switch (c->h.kind) {
    case kEager: return on_eager(ctx, ep, index);
    case kRts: return on_rts(ctx, ep, c);
    case kAck: rendezvous_on_ack(ctx, ep, c->h); return 1;
    case kCts: rendezvous_on_cts(ctx, ep, c->h); return 1;
    case kData: rendezvous_on_data(ctx, ep, c->h, c->payload); return 1;
    case kRetract: rendezvous_on_retract(ctx, ep, c->h.id); return 1;
    case kAbort: rendezvous_on_abort(ctx, ep, c->h.id); return 1;
    case kGetReq: rendezvous_on_get(ctx, ep, c->h); return 1;
  }
  log_line(ctx, SMD_TRANSPORT_LOG_WARN, "shm: dropping a cell of unknown kind %u from rank %d",
           c->h.kind, ep->peer);
  return 1;
}

bool recv_ring_nonempty(Endpoint *ep) { return load_acquire(ep->in->head) != ep->in_tail; }

bool recv_drain(Context *ctx, Endpoint *ep) {
  uint64_t head = load_acquire(ep->in->head);
  uint64_t tail = ep->in_tail;
  if (head == tail) return false;
  while (tail != head) {
    uint32_t used = handle_cell(ctx, ep, tail);
    if (used == 0) break;
    tail += used;
  }
  if (tail == ep->in_tail) return false;
  ep->in_tail = tail;
  store_release(ep->in->tail, tail);
  ++ctx->events;
  // The producer may be asleep waiting for room (see wait_for_work).
  if (!ep->self && !ep->dead) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (load_relaxed(ep->in->producer_waiting) != 0) doorbell_ring(ep->peer_hdr);
  }
  return true;
}

Status recv_start(Context *ctx, Endpoint *ep, void *buf, size_t size, uint64_t tag,
                  void **request) {
  if (Unexpected *u = ep->unexpected.pop(tag)) {
    Request *r = request_start(ctx, ep, ReqKind::kRecv, buf, size, tag);
    *request = r;
    if (u->rendezvous) {
      rendezvous_match(ctx, r, u->send_id, u->addr, u->size);
    } else {
      uint64_t want = u->size < size ? u->size : size;
      if (want != 0) memcpy(buf, u->data, want);
      recv_finish(ctx, r, u->size, want);
    }
    free(u->data);
    delete u;
    return SMD_TRANSPORT_OK;
  }
  if (ep->dead) return fail(ctx, SMD_TRANSPORT_ERR_PEER, "%s", ep->death.c_str());
  Request *r = request_start(ctx, ep, ReqKind::kRecv, buf, size, tag);
  r->phase = Phase::kRecvPosted;
  ep->posted.push(r);
  *request = r;
  return SMD_TRANSPORT_OK;
}

}  // namespace smd_shm
