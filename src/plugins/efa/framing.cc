// Framed messages, for the shm provider of libfabric 1.17, whose own tag
// matching cannot be relied on:
//  - a message larger than its receive (above the inject size) makes it
//    spin forever in its cross-memory copy;
//  - a receive with ignore bits misses its message among several
//    unexpected ones;
//  - it stores at most rx_size unexpected messages, and a message it
//    cannot store stops everything behind it from every sender: posted
//    receives then wait for messages queued behind one nobody receives.
// So the plugin matches tags itself. Everything a peer sends first goes
// on that peer's one stream tag, which a few standing receives per
// endpoint take in order into frame-sized buffers: a FrameHeader
// (framing.h) naming the caller's tag, followed by the payload when the
// message fits the frame. The plugin hands each frame to the oldest
// posted receive of its tag or keeps it as unexpected, in memory of its
// own. A larger message is pulled by the receiver straight out of the
// sender's memory (pull.cc), or, where that is not allowed, announced:
// its data follows on a tag of its own (kDataBit | cookie) that the
// receiver posts once a receive matched the announcement.
#include "framing.h"

#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "context.h"

namespace smd_efa {

namespace {

constexpr uint64_t kCookieMask = (uint64_t(1) << kCookieBits) - 1;

size_t inline_max(const Context *ctx) { return ctx->prov.frame - sizeof(FrameHeader); }

fi_addr_t source(const Context *ctx, const Endpoint *ep) {
  return ctx->prov.directed_recv ? ep->addr : FI_ADDR_UNSPEC;
}

char *bounce_get(Context *ctx) {
  if (ctx->bounces.empty()) return static_cast<char *>(malloc(ctx->prov.frame));
  char *b = ctx->bounces.back();
  ctx->bounces.pop_back();
  return b;
}

// Standing receives per endpoint: together they keep well under the
// provider's receive limit, so that its unexpected messages have room.
size_t stream_depth(const Context *ctx) {
  size_t peers = size_t(std::max(1, ctx->world_size - 1));
  return std::clamp<size_t>(512 / peers, 2, 32);
}

bool valid(const Context *ctx, const FrameHeader &h, size_t len) {
  if (len < sizeof h || h.magic != kFrameMagic) return false;
  switch (h.kind) {
    case kInline: return h.size == len - sizeof h;
    case kAnnounce:
    case kPull: return len == sizeof h && h.size > inline_max(ctx);
    case kAck: return len == sizeof h;
    default: return false;
  }
}

// An announced message matched r: receive its data through the provider.
void expect_data(Context *ctx, Request *r, const FrameHeader &h) {
  r->msg_size = size_t(h.size);
  r->cookie = h.cookie;
  r->stage = 1;
  if (r->msg_size > r->size) {
    r->scratch = static_cast<char *>(malloc(r->msg_size - r->size));
    if (r->scratch == nullptr) {
      r->error = "efa: no memory to take the " + std::to_string(r->msg_size - r->size) +
                 " B of a message that do not fit its receive";
      request_finish(ctx, r, SMD_TRANSPORT_ERR_NO_MEMORY, 0);
      return;
    }
  }
  repost(ctx, r);
}

// Hands a first part to the receive that matched it.
void deliver(Context *ctx, Request *r, const FrameHeader &h, const char *payload) {
  if (h.kind == kPull) {
    pull_deliver(ctx, r, h);
  } else if (h.kind == kAnnounce) {
    expect_data(ctx, r, h);
  } else {
    size_t n = std::min<size_t>(h.size, r->size);
    if (n != 0) memcpy(r->buf, payload, n);
    if (h.size > r->size) finish_truncated(ctx, r, size_t(h.size));
    else request_finish(ctx, r, SMD_TRANSPORT_OK, n);
  }
}

void stream_arrived(Context *ctx, Request *s, size_t len) {
  Endpoint *ep = s->ep;
  FrameState &f = *ep->frames;
  FrameHeader h{};
  if (len >= sizeof h) memcpy(&h, s->bounce, sizeof h);
  const char *payload = s->bounce + sizeof h;
  if (!valid(ctx, h, len)) {
    log_line(ctx, SMD_TRANSPORT_LOG_WARN, "efa: dropped a malformed %zu-byte frame from rank %d",
             len, ep->peer);
  } else if (h.kind == kAck) {
    pull_acked(ctx, ep, h);
  } else {
    auto it = f.posted.find(h.tag);
    if (it != f.posted.end()) {
      Request *r = it->second.front();
      it->second.pop_front();
      if (it->second.empty()) f.posted.erase(it);
      deliver(ctx, r, h, payload);
    } else {
      Arrival a{h, {}};
      if (h.kind == kInline) a.payload.assign(payload, payload + h.size);
      f.unexpected[h.tag].push_back(std::move(a));
    }
  }
  repost(ctx, s);
}

}  // namespace

bool truncation_unsafe(const Provider &p) {
  return p.name == "shm" || p.name.rfind("shm;", 0) == 0;
}

uint64_t stream_tag(const Context *ctx, int32_t sender) {
  return kStreamBit | (ctx->prov.rank_shift ? uint64_t(sender) << ctx->prov.rank_shift : 0);
}

uint64_t data_tag(const Context *ctx, int32_t sender, uint64_t cookie) {
  return kDataBit | (ctx->prov.rank_shift ? uint64_t(sender) << ctx->prov.rank_shift : 0) |
         (cookie & kCookieMask);
}

void frames_open(Context *ctx, Endpoint *ep) {
  ep->frames = std::make_unique<FrameState>();
  for (size_t i = 0; i < stream_depth(ctx); ++i) {
    char *b = bounce_get(ctx);
    if (b == nullptr) break;
    Request *s = ctx->pool.alloc();
    s->kind = ReqKind::kStream;
    s->state = ReqState::kDone;  // never the caller's
    s->ep = ep;
    s->bounce = b;
    ep->frames->stream.push_back(s);
    repost(ctx, s);
  }
}

void frames_close(Context *ctx, Endpoint *ep) {
  if (!ep->frames) return;
  for (Request *s : ep->frames->stream) {
    if (s->posted) {  // freed when the provider gives it back
      s->abandoned = true;
      s->magic = kRequestAbandoned;
      fi_cancel(&ctx->ep->fid, &s->fi);
      continue;
    }
    auto &q = ep->part_queue;
    q.erase(std::remove(q.begin(), q.end(), s), q.end());
    frame_release(ctx, s);
    ctx->pool.release(s);
  }
  ep->frames->stream.clear();
  ep->frames->unexpected.clear();
}

void frame_recv_start(Context *ctx, Request *r) {
  FrameState &f = *r->ep->frames;
  r->state = ReqState::kPosted;  // in software: the provider holds nothing
  auto it = f.unexpected.find(r->tag);
  if (it == f.unexpected.end()) {
    f.posted[r->tag].push_back(r);
    return;
  }
  Arrival a = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) f.unexpected.erase(it);
  deliver(ctx, r, a.header, a.payload.data());
}

ssize_t frame_send(Context *ctx, Request *r) {
  Endpoint *ep = r->ep;
  if (r->stage == 0) {
    FrameHeader h{};
    h.magic = kFrameMagic;
    h.tag = r->tag;
    h.size = r->size;
    char *out = ctx->frame_out.data();
    size_t len = sizeof h;
    if (r->size <= inline_max(ctx)) {
      h.kind = kInline;
      if (r->size != 0) memcpy(out + len, r->buf, r->size);
      len += r->size;
    } else {
      h.kind = ep->cma ? kPull : kAnnounce;
      h.cookie = r->cookie = ctx->next_cookie++ & kCookieMask;
      h.addr = uint64_t(reinterpret_cast<uintptr_t>(r->buf));
    }
    memcpy(out, &h, sizeof h);
    ssize_t rc = fi_tinject(ctx->ep, out, len, ep->addr, stream_tag(ctx, ctx->rank));
    if (rc != 0) return rc;
    if (h.kind == kInline) {
      request_finish(ctx, r, SMD_TRANSPORT_OK, r->size);
      return 0;
    }
    r->stage = 1;
    if (h.kind == kPull) {  // finished by the acknowledgement
      ctx->pulls[r->cookie] = r;
      r->state = ReqState::kPosted;
      return 0;
    }
  }
  ssize_t rc = fi_tsend(ctx->ep, r->buf, r->size, r->desc, ep->addr,
                        data_tag(ctx, ctx->rank, r->cookie), &r->fi);
  if (rc == 0) mark_posted(ctx, r);
  return rc;
}

ssize_t frame_part_recv(Context *ctx, Request *r) {
  Endpoint *ep = r->ep;
  if (r->kind == ReqKind::kStream)
    return fi_trecv(ctx->ep, r->bounce, ctx->prov.frame, nullptr, source(ctx, ep),
                    stream_tag(ctx, ep->peer), 0, &r->fi);
  uint64_t tag = data_tag(ctx, ep->peer, r->cookie);
  if (r->scratch == nullptr)
    return fi_trecv(ctx->ep, r->buf, r->msg_size, r->desc, source(ctx, ep), tag, 0, &r->fi);
  // Too large for the caller's buffer: its head goes there, the rest to
  // scratch.
  struct iovec iov[2] = {{r->buf, r->size}, {r->scratch, r->msg_size - r->size}};
  void *desc[2] = {r->desc, nullptr};
  return fi_trecvv(ctx->ep, iov, desc, 2, source(ctx, ep), tag, 0, &r->fi);
}

void frame_completed(Context *ctx, Request *r, size_t len) {
  if (r->kind == ReqKind::kStream) {
    stream_arrived(ctx, r, len);
  } else if (r->kind == ReqKind::kSend) {
    request_finish(ctx, r, SMD_TRANSPORT_OK, r->size);
  } else if (r->scratch != nullptr) {
    frame_release(ctx, r);
    finish_truncated(ctx, r, r->msg_size);
  } else {
    request_finish(ctx, r, SMD_TRANSPORT_OK, len);
  }
}

bool frame_unpost(Context *ctx, Request *r) {
  if (!ctx->prov.framed || r->posted || r->state != ReqState::kPosted) return false;
  if (r->kind == ReqKind::kSend) {
    auto it = ctx->pulls.find(r->cookie);
    if (it == ctx->pulls.end() || it->second != r) return false;
    ctx->pulls.erase(it);
    return true;
  }
  if (r->kind != ReqKind::kRecv || !r->ep->frames) return false;
  FrameState &f = *r->ep->frames;
  auto it = f.posted.find(r->tag);
  if (it == f.posted.end()) return false;
  auto pos = std::find(it->second.begin(), it->second.end(), r);
  if (pos == it->second.end()) return false;
  it->second.erase(pos);
  if (it->second.empty()) f.posted.erase(it);
  return true;
}

void finish_truncated(Context *ctx, Request *r, size_t msg_size) {
  char text[200];
  snprintf(text, sizeof text,
           "efa: a message of %zu B from rank %d does not fit the %zu-byte receive", msg_size,
           r->ep->peer, r->size);
  r->error = text;
  request_finish(ctx, r, SMD_TRANSPORT_ERR_TRUNCATED, r->size);
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
