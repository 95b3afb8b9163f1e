// Requests: what isend/irecv/iget hand out. They live in a pool with
// stable addresses; a request's id (slot index + generation) is what
// crosses the rings, so a reply for a request that was cancelled or
// reused is recognised and dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "request_list.h"
#include "slot_chunks.h"
#include "smd_transport.h"

namespace smd_shm {

struct Endpoint;

enum class ReqKind : uint8_t { kSend, kRecv, kGet };

// Where an unfinished request is linked (what cancel and peer death undo).
enum class Phase : uint8_t {
  kDone,        // finished: status and bytes are final
  kSendQueued,  // eager cells or RTS waiting in ep->queue
  kSendAwait,   // RTS in the ring, waiting for ACK or CTS
  kSendStream,  // no CMA: streaming kData cells (in ep->streams)
  kRecvPosted,  // in ep->posted, waiting for a match
  kRecvCopy,    // rendezvous matched, CMA copy under way (ctx->copies)
  kRecvStream,  // no CMA: waiting for kData cells (receives and igets)
};

struct Request {
  uint32_t magic = 0;
  uint32_t index = 0;
  uint32_t generation = 0;
  ReqKind kind = ReqKind::kSend;
  Phase phase = Phase::kDone;
  smd_transport_status_t status = SMD_TRANSPORT_OK;
  Endpoint *ep = nullptr;
  char *buf = nullptr;
  size_t size = 0;
  uint64_t tag = 0;
  uint64_t msg_size = 0;                       // receive: size of the matched message
  uint64_t bytes = 0;                          // bytes transferred, once done
  uint64_t want = 0;                           // rendezvous: bytes to copy or stream
  uint64_t done = 0;                           // rendezvous: bytes copied or streamed so far
  uint64_t peer_id = 0;                        // receive: the sender's request id
  uint64_t remote = 0;                         // receive: the sender's buffer address
  Request *qprev = nullptr, *qnext = nullptr;  // ep->posted queue
  Request *eprev = nullptr, *enext = nullptr;  // ep->pending list
  std::string error;                           // set_error text for a failed completion

  uint64_t id() const { return (uint64_t(generation) << 32) | index; }
};

constexpr uint32_t kRequestLive = 0x52514c56;  // "RQLV"

class RequestPool {
 public:
  Request *alloc();
  void release(Request *r);
  // The live request with this id, or nullptr.
  Request *find(uint64_t id) const;

 private:
  smd_plugin::SlotChunks<Request, 10> slots_;
};

// The unfinished requests of one endpoint, failed together when the peer
// dies.
using RequestList = smd_plugin::IntrusiveList<Request, &Request::eprev, &Request::enext>;

}  // namespace smd_shm
