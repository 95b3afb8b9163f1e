// Requests: what isend/irecv/iget hand out. A request wraps at most one
// UCX operation; UCX reports its end through a callback whose user data
// is the request, so requests live at stable addresses in a pool and are
// reused only once both the caller (test/cancel) and UCX are done.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "request_list.h"
#include "smd_transport.h"

namespace smd_ucx {

struct Endpoint;
struct Context;
struct RemoteKey;

enum class ReqKind : uint8_t { kSend, kRecv, kGet };

struct Request {
  uint32_t magic = 0;
  ReqKind kind = ReqKind::kSend;
  bool done = false;       // status, bytes and error are final
  Context *ctx = nullptr;  // owner, checked when the caller hands it back
  Endpoint *ep = nullptr;  // while unfinished: the endpoint's pending list
  void *ucx = nullptr;     // the UCX operation while UCX holds it
  size_t size = 0;         // buffer capacity
  uint64_t tag = 0;        // the caller's tag (without the rank bits)
  smd_transport_status_t status = SMD_TRANSPORT_OK;
  size_t bytes = 0;
  std::string error;                         // set_error text for a failed completion
  Request *prev = nullptr, *next = nullptr;  // endpoint's pending list
};

constexpr uint32_t kRequestLive = 0x51524355;  // "UCRQ"

class RequestPool {
 public:
  Request *alloc(Context *ctx);
  void release(Request *r);
  size_t live() const { return all_.size() - free_.size(); }

 private:
  std::deque<Request> all_;  // deque: growing keeps addresses stable
  std::vector<Request *> free_;
};

// The unfinished requests of one endpoint.
using RequestList = smd_plugin::IntrusiveList<Request, &Request::prev, &Request::next>;

}  // namespace smd_ucx
