#include "request.h"

namespace smd_ucx {

Request *RequestPool::alloc(Context *ctx) {
  Request *r;
  if (free_.empty()) {
    all_.emplace_back();
    r = &all_.back();
  } else {
    r = free_.back();
    free_.pop_back();
  }
  r->magic = kRequestLive;
  r->kind = ReqKind::kSend;
  r->done = false;
  r->ctx = ctx;
  r->ep = nullptr;
  r->ucx = nullptr;
  r->size = r->bytes = 0;
  r->tag = 0;
  r->status = SMD_TRANSPORT_OK;
  r->error.clear();
  r->prev = r->next = nullptr;
  return r;
}

void RequestPool::release(Request *r) {
  r->magic = 0;
  r->ctx = nullptr;
  free_.push_back(r);
}

}  // namespace smd_ucx
