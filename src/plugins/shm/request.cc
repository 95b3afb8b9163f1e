#include "request.h"

namespace smd_shm {

Request *RequestPool::alloc() {
  if (free_.empty()) {
    if ((count_ & (kChunk - 1)) == 0)
      chunks_.push_back(std::make_unique<Request[]>(kChunk));
    Request &r = at(count_);
    r.index = count_++;
    free_.push_back(r.index);
  }
  Request *r = &at(free_.back());
  free_.pop_back();
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
  free_.push_back(r->index);
}

Request *RequestPool::find(uint64_t id) const {
  uint32_t index = uint32_t(id);
  if (index >= count_) return nullptr;
  Request &r = at(index);
  if (r.magic != kRequestLive || r.generation != uint32_t(id >> 32))
    return nullptr;
  return &r;
}

}  // namespace smd_shm
