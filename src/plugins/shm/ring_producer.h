// The producer's side of a ring: room checks against a cached tail, cells
// written in place, one release store of head to publish a batch.
#pragma once

#include "context.h"

namespace smd_shm {

inline uint32_t cells_for(size_t bytes) {
  return bytes == 0 ? 1 : uint32_t((bytes + kCellPayload - 1) / kCellPayload);
}

inline Cell *ring_cell(Ring *ring, uint64_t index) { return &ring->cells[index % kRingCells]; }

// Room for `need` more cells; reads the consumer's tail only when the
// cached one says no.
inline bool ring_has_room(Endpoint *ep, uint32_t need) {
  if (kRingCells - (ep->out_head - ep->out_tail) >= need) return true;
  ep->out_tail = load_acquire(ep->out->tail);
  return kRingCells - (ep->out_head - ep->out_tail) >= need;
}

// Make the cells written so far visible and wake the peer if it sleeps.
inline void ring_publish(Endpoint *ep) {
  if (ep->out_head == ep->out_published) return;
  store_release(ep->out->head, ep->out_head);
  ep->out_published = ep->out_head;
  if (!ep->self) doorbell_ring(ep->peer_hdr);
}

}  // namespace smd_shm
