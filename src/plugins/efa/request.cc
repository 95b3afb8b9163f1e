#include "request.h"

#include <cstring>

namespace smd_efa {

const char *op_text(ReqKind k) {
  switch (k) {
    case ReqKind::kSend: return "send to";
    case ReqKind::kGet: return "read from";
    default: return "receive from";
  }
}

Request *RequestPool::alloc() {
  Request *r = slots_.take();
  memset(&r->fi, 0, sizeof r->fi);
  r->magic = kRequestLive;
  r->kind = ReqKind::kSend;
  r->state = ReqState::kQueued;
  r->posted = r->abandoned = false;
  r->status = r->stopping = SMD_TRANSPORT_OK;
  r->ep = nullptr;
  r->buf = r->desc = nullptr;
  r->own_mr = nullptr;
  r->size = r->bytes = 0;
  r->tag = r->remote = r->key = 0;
  r->prev = r->next = nullptr;
  r->stage = 0;
  r->bounce = r->scratch = nullptr;
  r->msg_size = 0;
  r->cookie = 0;
  r->error.clear();
  return r;
}

void RequestPool::release(Request *r) {
  r->magic = 0;
  slots_.give_back(r);
}

}  // namespace smd_efa
