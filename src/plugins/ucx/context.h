// The plugin's state: a UCP context and worker per world (init ..
// finalize), an endpoint per connected peer, requests, registrations, and
// the internal entry points the per-concern source files share.
#pragma once

#include <ucp/api/ucp.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "host_calls.h"
#include "request.h"
#include "smd_transport.h"
#include "unmap_hook.h"

namespace smd_ucx {

using Status = smd_transport_status_t;

struct Context;

// A peer's remote key, unpacked for one endpoint, kept while the
// endpoint lives (a peer's registrations are few and reused).
struct RemoteKey {
  ucp_rkey_h rkey = nullptr;
  uint64_t base = 0;
  uint64_t length = 0;
};

struct Endpoint {
  uint64_t magic;
  Context *ctx;
  int32_t peer;  // world rank
  ucp_ep_h ep = nullptr;
  bool closing = false;  // inside disconnect: error callbacks are ignored
  bool failed = false;
  bool failure_handled = false;  // pending receives withdrawn, deadline set
  ucs_status_t failure = UCS_OK;
  std::string death;                                 // "ucx peer rank N: <reason>"
  int64_t give_up_ns = 0;                            // requests UCX still holds complete by then
  RequestList pending;                               // every unfinished request on this endpoint
  std::unordered_map<std::string, RemoteKey> rkeys;  // packed key -> unpacked
};

constexpr uint64_t kEndpointMagic = 0x50455f5855435355ull;      // "USCUX_EP"
constexpr uint64_t kContextMagic = 0x58544358555f4d53ull;       // "SM_UXCTX"
constexpr uint64_t kRegistrationMagic = 0x4745525f58435553ull;  // "SUCX_REG"

// Registered memory: whole pages mapped with UCX. Buffers the core sends
// are never registered here (UCX registers what its protocols need, with
// its own cache); registrations serve one-sided reads.
struct Region {
  uintptr_t base = 0, end = 0;        // [base, end), page aligned
  void *handle = nullptr;             // the ucp_mem_h
  std::vector<unsigned char> packed;  // its remote key, packed on demand
};

// What mem_register hands out: the range asked for and its region.
struct Registration {
  uint64_t magic;
  Region *region;
  uintptr_t ptr;
  size_t size;
};

struct Context {
  uint64_t magic = kContextMagic;
  const smd_transport_host_t *host = nullptr;
  int32_t rank = 0, world_size = 0;

  ucp_context_h ucp = nullptr;
  ucp_worker_h worker = nullptr;
  int event_fd = -1;                   // the worker's wake-up fd; -1 without UCP_FEATURE_WAKEUP
  std::vector<unsigned char> address;  // our blob: header + worker address
  std::string tls;                     // what UCX_TLS asked for, for messages

  std::vector<Endpoint *> endpoints;
  std::unordered_map<int32_t, Endpoint *> by_peer;
  std::vector<Endpoint *> failed;  // failed endpoints with requests to finish
  RequestPool pool;
  uint64_t completions = 0;  // requests finished so far (wait() watches it)

  bool unmap_events = false;  // unmaps are reported to the host (UCM hooks)
  bool cuda_memory = false;   // this UCX moves CUDA device memory (built with CUDA)
  std::unordered_set<Registration *> registrations;
};

// ---- errors, logging, parameters (../util/host_calls.h), time (clock.cc)
using smd_plugin::fail;
using smd_plugin::fail_host;
using smd_plugin::log_line;
using smd_plugin::param;
int64_t now_ns();

// ---- UCX's own log lines (ucx_log.cc)
// While a context is registered, UCX's warnings go to its host log, not
// to stdout; the last one of the calling thread explains a failure.
void ucx_log_attach(const smd_transport_host_t *host);
void ucx_log_detach(const smd_transport_host_t *host);
// The last UCX warning or error logged by this thread ("" if none), and
// forgetting it.
std::string ucx_log_last();
void ucx_log_clear();

// ---- status codes (status.cc)
// A UCX status of a finished operation as a plugin status.
Status status_from_ucs(ucs_status_t s);
// Whether UCX reports the peer as gone (connection reset, timeout, ...).
bool is_peer_failure(ucs_status_t s);

// ---- lifecycle (context.cc, endpoint.cc)
Status context_init(const smd_transport_host_t *host, void **out);
Status context_finalize(Context *ctx);
Status context_address(Context *ctx, void *buf, size_t *size);
Status endpoint_connect(Context *ctx, int32_t peer, const void *address, size_t size, void **out);
Status endpoint_disconnect(Context *ctx, Endpoint *ep);
// Close the UCX endpoints of `eps` (flush first, bounded, then force) and
// free them; their unfinished requests complete as `why`.
void endpoints_close(Context *ctx, const std::vector<Endpoint *> &eps);

// ---- peers that fail (peer_failure.cc)
// UCX's error callback for an endpoint (arg = Endpoint).
void on_endpoint_error(void *arg, ucp_ep_h ep, ucs_status_t status);
// Mark ep failed (first reason wins) and queue its requests for failing.
void peer_failed(Context *ctx, Endpoint *ep, ucs_status_t why);
// A receive posted to ep after it failed and not matched at once.
void peer_failed_receive(Context *ctx, Endpoint *ep, Request *r);
// Finish what failed endpoints still hold: withdraw their receives, and
// after a grace period complete whatever UCX still has with ERR_PEER.
void failures_step(Context *ctx);

// ---- requests (completion.cc)
Request *request_start(Context *ctx, Endpoint *ep, ReqKind kind, size_t size, uint64_t tag);
// Finished: unlinked from its endpoint, status and bytes final.
void request_finish(Context *ctx, Request *r, Status status, size_t bytes,
                    const std::string &error);
// A UCX operation handle (or immediate result) for request r.
void request_attach(Context *ctx, Request *r, ucs_status_ptr_t sp);
// Let UCX keep an unfinished operation without us (its callback will not
// run); r no longer refers to it.
void request_abandon(Context *ctx, Request *r);
void on_send_done(void *ucx_req, ucs_status_t status, void *user);
// Parameters of a send or read that reports to r (host memory,
// on_send_done).
ucp_request_param_t send_params(Request *r);
void on_recv_done(void *ucx_req, ucs_status_t status, const ucp_tag_recv_info_t *info, void *user);
Status request_test(Context *ctx, Request *r, int *done, size_t *size);
Status request_cancel(Context *ctx, Request *r);

// ---- tagged messages (send.cc, receive.cc)
Status send_start(Context *ctx, Endpoint *ep, const void *buf, size_t size, uint64_t tag,
                  void **request);
Status recv_start(Context *ctx, Endpoint *ep, void *buf, size_t size, uint64_t tag, void **request);

// ---- progress and waiting (progress.cc, wait.cc)
// One pass: UCX progress until idle (bounded), then failed peers.
unsigned progress(Context *ctx);  // events UCX handled
Status wait_for_work(Context *ctx, int64_t timeout_us);

// ---- memory (registration.cc, rma.cc)
Status mem_register(Context *ctx, void *ptr, size_t size, void **mr);
Status mem_deregister(Context *ctx, void *mr);
// Unmap every cached region (finalize).
void registrations_release_all(Context *ctx);
Status mem_pack(Context *ctx, void *mr, void *buf, size_t *size);
Status rma_get(Context *ctx, Endpoint *ep, void *local, uint64_t remote, const void *rkey,
               size_t rkey_size, size_t size, void **request);
void rkeys_release(Endpoint *ep);

}  // namespace smd_ucx
