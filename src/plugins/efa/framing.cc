// Framed messages, for providers whose own truncation is unsafe: shm in
// libfabric 1.17 loops forever in its cross-memory copy, or never
// completes, when a message is larger than the posted receive. Such a
// provider is never given a receive smaller than the message:
//  - messages up to `frame` bytes travel as they are, and every receive
//    is at least a frame (a bounce buffer stands in for smaller ones); it
//    matches such a message or a header, whichever comes (the header bit
//    is ignored when matching);
//  - a larger message travels as a header carrying its size (tag |
//    kHeaderBit, injected) and then its data (tag | kDataBit); told the
//    size, the receiver posts a receive of exactly that size, into the
//    caller's buffer or, if it does not fit, into a scratch buffer whose
//    head it copies before reporting ERR_TRUNCATED.
// Same-tag order holds: headers and small messages match in send order,
// and data receives are posted in the order their headers arrived.
// Framed providers need no local descriptors (none is passed for bounce
// and scratch buffers).
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "context.h"

namespace smd_efa {

namespace {

constexpr uint64_t kHeaderBit = uint64_t(1) << 63;
constexpr uint64_t kDataBit = uint64_t(1) << 62;
constexpr uint64_t kFrameMagic = 0x454d4152465f4645ull;  // "EF_FRAME"

struct FrameHeader {
  uint64_t magic;
  uint64_t size;
};

fi_addr_t source(const Context *ctx, const Request *r) {
  return ctx->prov.directed_recv ? r->ep->addr : FI_ADDR_UNSPEC;
}

char *bounce_get(Context *ctx) {
  if (ctx->bounces.empty()) return static_cast<char *>(malloc(ctx->prov.frame));
  char *b = ctx->bounces.back();
  ctx->bounces.pop_back();
  return b;
}

void finish_truncated(Context *ctx, Request *r, size_t msg_size) {
  char text[200];
  snprintf(text, sizeof text,
           "efa: a message of %zu B from rank %d does not fit the %zu-byte receive",
           msg_size, r->ep->peer, r->size);
  r->error = text;
  request_finish(ctx, r, SMD_TRANSPORT_ERR_TRUNCATED, r->size);
}

}  // namespace

bool truncation_unsafe(const Provider &p) {
  return p.name == "shm" || p.name.rfind("shm;", 0) == 0;
}

bool framed_send(const Context *ctx, const Request *r) {
  return ctx->prov.framed && r->kind == ReqKind::kSend && r->size > ctx->prov.frame;
}

ssize_t frame_send(Context *ctx, Request *r) {
  if (r->stage == 0) {
    FrameHeader h{kFrameMagic, r->size};
    ssize_t rc = fi_tinject(ctx->ep, &h, sizeof h, r->ep->addr, r->tag | kHeaderBit);
    if (rc != 0) return rc;
    r->stage = 1;
  }
  return fi_tsend(ctx->ep, r->buf, r->size, r->desc, r->ep->addr, r->tag | kDataBit, &r->fi);
}

ssize_t frame_recv(Context *ctx, Request *r) {
  if (r->stage == 0) {
    if (r->size >= ctx->prov.frame)
      return fi_trecv(ctx->ep, r->buf, r->size, r->desc, source(ctx, r), r->tag, kHeaderBit,
                      &r->fi);
    if (r->bounce == nullptr) r->bounce = bounce_get(ctx);
    if (r->bounce == nullptr) return -FI_ENOMEM;
    return fi_trecv(ctx->ep, r->bounce, ctx->prov.frame, nullptr, source(ctx, r), r->tag,
                    kHeaderBit, &r->fi);
  }
  if (r->scratch != nullptr)
    return fi_trecv(ctx->ep, r->scratch, r->msg_size, nullptr, source(ctx, r),
                    r->tag | kDataBit, 0, &r->fi);
  return fi_trecv(ctx->ep, r->buf, r->msg_size, r->desc, source(ctx, r), r->tag | kDataBit, 0,
                  &r->fi);
}

void frame_received(Context *ctx, Request *r, uint64_t tag, size_t len) {
  if (r->stage == 1) {
    if (r->scratch != nullptr) {
      memcpy(r->buf, r->scratch, r->size);
      frame_release(ctx, r);
      finish_truncated(ctx, r, r->msg_size);
      return;
    }
    request_finish(ctx, r, SMD_TRANSPORT_OK, len);
    return;
  }
  const char *got = r->bounce != nullptr ? r->bounce : static_cast<const char *>(r->buf);
  if ((tag & kHeaderBit) == 0) {  // a small message, whole
    if (r->bounce != nullptr && r->size != 0) memcpy(r->buf, r->bounce, std::min(len, r->size));
    frame_release(ctx, r);
    if (len > r->size)
      finish_truncated(ctx, r, len);
    else
      request_finish(ctx, r, SMD_TRANSPORT_OK, len);
    return;
  }
  FrameHeader h;
  memcpy(&h, got, sizeof h);
  frame_release(ctx, r);
  if (len != sizeof h || h.magic != kFrameMagic || h.size <= ctx->prov.frame) {
    r->error = "efa: a malformed message header from rank " + std::to_string(r->ep->peer);
    request_finish(ctx, r, SMD_TRANSPORT_ERR_OTHER, 0);
    return;
  }
  r->msg_size = size_t(h.size);
  r->stage = 1;
  if (r->msg_size > r->size) {
    r->scratch = static_cast<char *>(malloc(r->msg_size));
    if (r->scratch == nullptr) {
      r->error = "efa: no memory to take a " + std::to_string(r->msg_size) +
                 "-byte message that does not fit its receive";
      request_finish(ctx, r, SMD_TRANSPORT_ERR_NO_MEMORY, 0);
      return;
    }
  }
  repost(ctx, r);
}

void frame_release(Context *ctx, Request *r) {
  if (r->bounce != nullptr) {
    ctx->bounces.push_back(r->bounce);
    r->bounce = nullptr;
  }
  free(r->scratch);
  r->scratch = nullptr;
}

}  // namespace smd_efa
