// Requests: what isend/irecv/iget hand out. A request is also the
// libfabric operation context (fi_context2 comes first), so its slot must
// outlive the provider's use of it: a request the caller lets go while
// the provider still owns it is only marked abandoned, and its slot is
// reused once the provider's completion has arrived.
#pragma once

#include <rdma/fabric.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "request_list.h"
#include "slot_chunks.h"
#include "smd_transport.h"

namespace smd_efa {

struct Endpoint;
struct MrEntry;

// kStream: a framed endpoint's standing receive (framing.cc), never seen
// by the caller.
enum class ReqKind : uint8_t { kSend, kRecv, kGet, kStream };

// What the caller sees. The provider's ownership is tracked apart
// (Request::posted), because a request can finish for the caller (peer
// death, cancellation) while the provider still holds its context.
enum class ReqState : uint8_t {
  kQueued,  // waiting in its endpoint's queue: the provider said -FI_EAGAIN
  kPosted,  // handed to the provider; its completion is awaited
  kDone,    // finished: status and bytes are final
};

struct Request {
  struct fi_context2 fi;  // first: the op_context of every operation
  uint32_t magic = 0;
  uint32_t index = 0;
  ReqKind kind = ReqKind::kSend;
  ReqState state = ReqState::kDone;
  bool posted = false;     // the provider owns the context
  bool abandoned = false;  // released by the caller while posted
  smd_transport_status_t status = SMD_TRANSPORT_OK;
  Endpoint *ep = nullptr;
  void *buf = nullptr;
  size_t size = 0;
  uint64_t tag = 0;                 // the tag on the wire
  void *desc = nullptr;             // local memory descriptor, or nullptr
  struct fid_mr *own_mr = nullptr;  // registered for this request alone
  uint64_t remote = 0;              // iget: address as the provider wants it
  uint64_t key = 0;                 // iget: remote key
  size_t bytes = 0;                 // bytes transferred, once done
  // Being stopped (cancel, disconnect, peer death): the status its
  // FI_ECANCELED completion is reported with. OK when not stopping.
  smd_transport_status_t stopping = SMD_TRANSPORT_OK;
  // Framed messages (framing.cc): which part is out (0: the first), and
  // the buffers the provider may write.
  uint8_t stage = 0;
  char *bounce = nullptr;                    // a stream receive's frame buffer
  char *scratch = nullptr;                   // the tail of a message too large to fit
  size_t msg_size = 0;                       // announced by the header
  uint64_t cookie = 0;                       // names an announced or pulled message
  Request *prev = nullptr, *next = nullptr;  // ep->pending
  std::string error;                         // set_error text of a failed completion
};

// "send to", "receive from", "read from": for error messages.
const char *op_text(ReqKind k);

constexpr uint32_t kRequestLive = 0x51524645;       // "EFRQ"
constexpr uint32_t kRequestAbandoned = 0x41524645;  // "EFRA"

// Fixed-address slots in chunks; freed slots are reused LIFO (warm).
class RequestPool {
 public:
  Request *alloc();
  void release(Request *r);
  // Calls f on every slot not released (finalize frees their buffers).
  template <class F>
  void each_live(F f) {
    for (uint32_t i = 0; i < slots_.made(); ++i)
      if (slots_.at(i).magic != 0) f(&slots_.at(i));
  }
  size_t in_use() const { return slots_.in_use(); }

 private:
  smd_plugin::SlotChunks<Request, 8> slots_;
};

// The unfinished requests of one endpoint, failed together when its peer
// dies.
using RequestList = smd_plugin::IntrusiveList<Request, &Request::prev, &Request::next>;

}  // namespace smd_efa
