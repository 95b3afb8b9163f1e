// Sending: eager messages straight into the peer's ring, rendezvous
// descriptors for large ones, and a per-endpoint queue (kept in send
// order) for whatever does not fit right now. isend never blocks.
#include <cstring>

#include "context.h"
#include "ring_producer.h"

namespace smd_shm {

static void write_eager(Endpoint *ep, const char *buf, size_t size, uint64_t tag) {
  uint32_t n = cells_for(size);
  size_t off = 0;
  for (uint32_t k = 0; k < n; ++k) {
    Cell *c = ring_cell(ep->out, ep->out_head + k);
    uint32_t len = uint32_t(size - off < kCellPayload ? size - off : kCellPayload);
    c->h = CellHeader{kEager, len, tag, size, 0};
    if (len != 0) memcpy(c->payload, buf + off, len);
    off += len;
  }
  ep->out_head += n;
}

static void write_rts(Endpoint *ep, Request *r) {
  Cell *c = ring_cell(ep->out, ep->out_head++);
  c->h = CellHeader{kRts, 8, r->tag, r->size, r->id()};
  uint64_t addr = reinterpret_cast<uintptr_t>(r->buf);
  memcpy(c->payload, &addr, sizeof addr);
}

static void write_cell(Endpoint *ep, const CellHeader &h) {
  ring_cell(ep->out, ep->out_head++)->h = h;
}

// One kData cell of a stream; true when the stream is finished.
static bool write_data(Endpoint *ep, Stream &s) {
  Cell *c = ring_cell(ep->out, ep->out_head++);
  uint64_t left = s.total - s.offset;
  uint32_t len = uint32_t(left < kCellPayload ? left : kCellPayload);
  c->h = CellHeader{kData, len, 0, s.offset, s.recv_id};
  memcpy(c->payload, s.src + s.offset, len);
  s.offset += len;
  return s.offset == s.total;
}

static void mark_sender(Context *ctx, Endpoint *ep) {
  if (ep->in_senders) return;
  ep->in_senders = true;
  ctx->senders.push_back(ep);
}

Status send_start(Context *ctx, Endpoint *ep, const void *buf, size_t size, uint64_t tag,
                  void **request) {
  if (ep->dead) return fail(ctx, SMD_TRANSPORT_ERR_PEER, "%s", ep->death.c_str());
  Request *r = request_start(ctx, ep, ReqKind::kSend, const_cast<void *>(buf), size, tag);
  *request = r;
  bool eager = size <= ctx->eager_limit;
  if (ep->queue.empty() && ring_has_room(ep, eager ? cells_for(size) : 1)) {
    if (eager) {
      write_eager(ep, r->buf, size, tag);
      ring_publish(ep);
      request_complete(ctx, r, SMD_TRANSPORT_OK, size);
    } else {
      write_rts(ep, r);
      ring_publish(ep);
      r->phase = Phase::kSendAwait;
    }
    return SMD_TRANSPORT_OK;
  }
  r->phase = Phase::kSendQueued;
  ep->queue.push_back(OutItem{eager ? OutItem::kEagerSend : OutItem::kRtsSend, r, {}});
  mark_sender(ctx, ep);
  return SMD_TRANSPORT_OK;
}

void send_control(Context *ctx, Endpoint *ep, uint32_t kind, uint64_t id, uint64_t size,
                  uint64_t tag) {
  if (ep->dead) return;
  CellHeader h{kind, 0, tag, size, id};
  if (ep->queue.empty() && ring_has_room(ep, 1)) {
    write_cell(ep, h);
    ring_publish(ep);
    return;
  }
  ep->queue.push_back(OutItem{OutItem::kControl, nullptr, h});
  mark_sender(ctx, ep);
}

void send_stream(Context *ctx, Endpoint *ep, const Stream &s) {
  ep->streams.push_back(s);
  mark_sender(ctx, ep);
}

void send_flush(Context *ctx, Endpoint *ep) {
  if (ep->dead) {
    ep->queue.clear();
    ep->streams.clear();
    return;
  }
  while (!ep->queue.empty()) {
    OutItem &item = ep->queue.front();
    if (item.kind != OutItem::kControl && item.req == nullptr) {
      ep->queue.pop_front();  // cancelled while queued
      continue;
    }
    uint32_t need = item.kind == OutItem::kEagerSend ? cells_for(item.req->size) : 1;
    if (!ring_has_room(ep, need)) break;
    if (item.kind == OutItem::kEagerSend) {
      Request *r = item.req;
      write_eager(ep, r->buf, r->size, r->tag);
      request_complete(ctx, r, SMD_TRANSPORT_OK, r->size);
    } else if (item.kind == OutItem::kRtsSend) {
      write_rts(ep, item.req);
      item.req->phase = Phase::kSendAwait;
    } else {
      write_cell(ep, item.cell);
    }
    ep->queue.pop_front();
  }
  while (!ep->streams.empty() && ring_has_room(ep, 1)) {
    Stream &s = ep->streams.front();
    if (!write_data(ep, s)) continue;
    if (s.req != nullptr) request_complete(ctx, s.req, SMD_TRANSPORT_OK, s.total);
    ep->streams.pop_front();
  }
  ring_publish(ep);
  if (ep->queue.empty() && ep->streams.empty() && load_relaxed(ep->out->producer_waiting) != 0)
    store_relaxed(ep->out->producer_waiting, 0u);
}

bool send_idle(Endpoint *ep) { return ep->queue.empty() && ep->streams.empty(); }

bool send_can_advance(Endpoint *ep) {
  if (ep->dead) return !send_idle(ep);
  if (!ep->queue.empty()) {
    const OutItem &item = ep->queue.front();
    uint32_t need =
        item.kind == OutItem::kEagerSend && item.req != nullptr ? cells_for(item.req->size) : 1;
    return ring_has_room(ep, need);
  }
  return !ep->streams.empty() && ring_has_room(ep, 1);
}

}  // namespace smd_shm
