#include "request.h"

namespace smd_shm {

Request *RequestPool::alloc() {
  Request *r = slots_.take();
  r->magic = kRequestLive;
  r->phase = Phase::kDone;
  r->status = SMD_TRANSPORT_OK;
  r->ep = nullptr;
  r->buf = nullptr;
  r->size = r->msg_size = r->bytes = r->want = r->done = 0;
  r->tag = r->peer_id = r->remote = 0;
  r->qprev = r->qnext = r->eprev = r->enext = nullptr;
  r->error.clear();
  return r;
}

void RequestPool::release(Request *r) {
  r->magic = 0;
  ++r->generation;
  slots_.give_back(r);
}

Request *RequestPool::find(uint64_t id) const {
  uint32_t index = uint32_t(id);
  if (index >= slots_.made()) return nullptr;
  Request &r = slots_.at(index);
  if (r.magic != kRequestLive || r.generation != uint32_t(id >> 32)) return nullptr;
  return &r;
}

}  // namespace smd_shm
