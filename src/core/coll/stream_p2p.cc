#include "core/coll/stream_p2p.h"

#include <cstdint>

#include "core/coll/algorithms/device_staging.h"
#include "core/coll/stream_proxy.h"
#include "core/comm/communicator.h"
#include "core/comm/p2p_matcher.h"
#include "core/gpu/cuda_api.h"
#include "core/gpu/device_ops.h"
#include "core/gpu/pointer_kind.h"
#include "core/util/error.h"

namespace smd {
namespace {

// Copies on the proxy's stream and waits for the copy.
void copy_now(void *dst, const void *src, size_t bytes) {
  stage_copy(dst, src, bytes);
  stage_sync();
}

int device_of(const void *buf) { return gpu::classify_pointer(buf).device; }

[[noreturn]] void fail_call(const Error &e, const char *what, int peer, int tag) {
  fail(e.code(), "stream-ordered %s rank %d (tag %d): %s", what, peer, tag, e.message().c_str());
}

}  // namespace

std::shared_ptr<Task> send_on_stream(Comm &c, const void *buf, size_t bytes, int peer, int tag,
                                     void *stream) {
  Comm *raw = &c;  // the executor, inside the communicator, drains before it goes
  return run_work_on_stream(c, device_of(buf), stream, [raw, buf, bytes, peer, tag] {
    P2PMatcher::Envelope env;
    P2PMatcher::Receipt receipt;
    P2PReq env_req, data_req, receipt_req;
    try {
      uint8_t *host = pinned_staging(bytes);
      copy_now(host, buf, bytes);
      raw->user_p2p().isend_with_receipt(peer, host, bytes, tag, &env, &env_req, &data_req,
                                         &receipt, &receipt_req);
      P2PReq *all[] = {&env_req, &data_req, &receipt_req};
      raw->wait_ptrs(all, 3, "stream-ordered send");
    } catch (const Error &e) {
      fail_call(e, "send to", peer, tag);
    }
    if (receipt.result != SMD_SUCCESS)
      fail(smd_result_t(receipt.result),
           "stream-ordered send to rank %d (tag %d): the %zu-byte message was not taken by the "
           "%llu-byte receive there (%s)",
           peer, tag, bytes, static_cast<unsigned long long>(receipt.capacity),
           receipt.result == SMD_ERR_TRUNCATED ? "too long" : "sizes differ");
  });
}

std::shared_ptr<Task> recv_on_stream(Comm &c, void *buf, size_t bytes, int peer, int tag,
                                     void *stream) {
  Comm *raw = &c;
  return run_work_on_stream(c, device_of(buf), stream, [raw, buf, bytes, peer, tag] {
    try {
      uint8_t *host = pinned_staging(bytes);
      P2PMatcher &m = raw->user_p2p();
      std::shared_ptr<P2PMatcher::Recv> r = m.irecv(peer, tag, host, bytes, /*exact=*/true);
      m.wait(*r, "stream-ordered receive");
      copy_now(buf, host, bytes);
    } catch (const Error &e) {
      fail_call(e, "receive from", peer, tag);
    }
  });
}

}  // namespace smd
