// The plugin's state: a context per world (init .. finalize) holding one
// libfabric RDM endpoint, and an endpoint record per connected peer (its
// address-vector entry), plus the internal entry points the per-concern
// source files share.
#pragma once

#include <rdma/fabric.h>
#include <sys/socket.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "framing.h"
#include "host_calls.h"
#include "request.h"
#include "smd_transport.h"

namespace smd_efa {

using Status = smd_transport_status_t;

struct Context;

// How a peer's liveness socket stands (liveness.cc).
enum class Watch : uint8_t {
  kNone,        // the peer publishes no liveness socket, or it is off
  kConnecting,  // non-blocking connect under way
  kUp,          // connected; EOF or reset means the peer is gone
  kUnwatched,   // could not connect (not refused): death not detectable
};

struct Endpoint {
  uint64_t magic;
  Context *ctx;
  int32_t peer;    // world rank
  fi_addr_t addr;  // in ctx->av
  bool dead = false;
  bool disconnected = false;  // the caller let go; freed when owned == 0
  std::string death;          // why the peer is considered gone

  std::deque<Request *> tx_queue;  // sends and reads the provider refused
  std::deque<Request *> rx_queue;  // receives the provider refused
  // Framed providers: the later parts of messages (data receives after
  // their header) and the standing stream receives, posted before new
  // receives, which may wait for messages sent after them.
  std::deque<Request *> part_queue;
  // The queue a refused request of this endpoint waits in.
  std::deque<Request *> &queue_of(const Request *r) {
    if (r->kind == ReqKind::kStream || (r->kind == ReqKind::kRecv && r->stage != 0))
      return part_queue;
    return r->kind == ReqKind::kRecv ? rx_queue : tx_queue;
  }
  std::unique_ptr<FrameState> frames;  // framed providers only
  bool queued() const {
    return !tx_queue.empty() || !part_queue.empty() || !rx_queue.empty() ||
           (frames && !frames->acks_out.empty());
  }
  bool in_backlog = false;
  RequestList pending;  // every unfinished request on this endpoint
  uint64_t owned = 0;   // requests whose context the provider holds

  Watch watch = Watch::kNone;
  int live_fd = -1;
  uint64_t peer_nonce = 0;
  int32_t pid = 0;     // the peer's process, when on this machine
  bool cma = false;    // its memory is readable (pull.cc)
  std::string region;  // shm provider: its /dev/shm name (leftovers.cc)
  uint8_t hello[16];
  size_t hello_got = 0;
};

constexpr uint64_t kEndpointMagic = 0x5045445f414645ull;  // "EFA_DEP"
constexpr uint64_t kContextMagic = 0x5854435f414645ull;   // "EFA_CTX"

// An explicit registration (mem_register).
struct Registration {
  uint64_t magic;
  struct fid_mr *mr;  // nullptr for a 0-byte registration
  void *desc;
  uint64_t key;
  uintptr_t base;
  size_t size;
};
constexpr uint64_t kRegistrationMagic = 0x4745525f414645ull;  // "EFA_REG"

// SMD_EFA_* parameters, read once at init.
struct Config {
  std::string provider;         // SMD_EFA_PROVIDER ("" = the efa provider only)
  std::string domain;           // SMD_EFA_DOMAIN ("" = the first one)
  bool force_mr_local = false;  // SMD_EFA_MR_LOCAL
  bool directed_recv = false;   // SMD_EFA_DIRECTED_RECV
  bool liveness = true;         // SMD_EFA_LIVENESS
};

// What the chosen provider offers, as the rest of the plugin needs it.
struct Provider {
  std::string name;  // prov_name, e.g. "tcp;ofi_rxm"
  std::string domain;
  bool directed_recv = false;  // receives name their source address
  bool rma = false;            // fi_read towards registered memory
  bool remote_comm = true;     // reaches other nodes
  bool shm = false;            // the shm provider (leftovers.cc)
  bool mr_local = false;       // pass registered descriptors (ours or required)
  bool mr_virt_addr = false;   // RMA addresses are virtual, not offsets
  bool mr_prov_key = false;    // the provider chooses keys
  bool mr_endpoint = false;    // registrations are bound to the endpoint
  bool wait_fd = false;        // the CQ has a file descriptor to sleep on
  bool framed = false;         // truncation is unsafe: frame messages
  size_t frame = 0;            // framed: largest message sent as it is
  size_t inject_size = 0;
  uint64_t max_msg_size = 0;
  unsigned rank_shift = 0;  // without directed receives: sender rank << this
};

struct Liveness {
  int listen_fd = -1;
  struct sockaddr_storage addr {};  // what peers connect to
  std::vector<int> accepted;        // peers watching us
  uint64_t next_tick_ns = 0;
};

struct Context {
  uint64_t magic = kContextMagic;
  const smd_transport_host_t *host = nullptr;
  int32_t rank = 0, world_size = 0, node_count = 1;
  uint64_t nonce = 0;
  Config cfg;
  Provider prov;

  struct fi_info *info = nullptr;
  struct fid_fabric *fabric = nullptr;
  struct fid_domain *domain = nullptr;
  struct fid_av *av = nullptr;
  struct fid_cq *cq = nullptr;
  struct fid_ep *ep = nullptr;
  int wait_fd = -1;
  std::vector<uint8_t> name;  // fi_getname

  RequestPool pool;
  uint64_t next_key = 1;                          // for providers without FI_MR_PROV_KEY
  uint64_t next_cookie = 1;                       // framed: names pulled and announced messages
  std::unordered_map<uint64_t, Request *> pulls;  // sends awaiting their kAck
  std::vector<Endpoint *> endpoints;              // connected, not yet freed
  std::vector<Endpoint *> backlog;                // endpoints with queued requests
  uint64_t unfinished = 0;                        // requests not yet done for the caller
  uint64_t owned = 0;                             // requests whose context the provider holds
  uint64_t events = 0;                            // completions seen (wait's progress signal)
  bool reap = false;                              // a disconnected endpoint may be freed now
  bool flushed = false;                           // the teardown's last progress ran (connect.cc)
  Liveness live;
  std::unordered_set<Registration *> registrations;
  std::vector<char *> bounces;  // framed: free frame-sized buffers
  std::vector<char> frame_out;  // framed: where a first part is assembled
};

// ---- errors, logging, parameters (src/plugins/util, config.cc)
using smd_plugin::fail;
using smd_plugin::fail_host;
using smd_plugin::log_line;
Status read_config(Context *ctx, Config *cfg);
// The status a libfabric error (positive FI_E* / errno) maps to, and
// whether it means the peer is gone.
Status status_of_fi_error(int err);
bool is_peer_error(int err);

// ---- choosing and opening the provider (quirks.cc, provider.cc, fabric.cc)
// Environment settings that avoid known provider defects; must run before
// the process's first fi_getinfo.
void apply_provider_quirks(Context *ctx);
// The fi_info to open, per SMD_EFA_PROVIDER / SMD_EFA_DOMAIN; explains
// itself in an INFO log line, or fails with the reason.
Status select_provider(Context *ctx, struct fi_info **out);
Status context_init(const smd_transport_host_t *host, void **out);
Status context_finalize(Context *ctx);
Status context_address(Context *ctx, void *buf, size_t *size);

// ---- peers (connect.cc)
Status endpoint_connect(Context *ctx, int32_t peer, const void *address, size_t size, void **out);
Status endpoint_disconnect(Context *ctx, Endpoint *ep);
// Frees a disconnected endpoint once the provider holds nothing of it.
void endpoint_reap(Context *ctx, Endpoint *ep);

// ---- operations (post.cc)
Status start_send(Context *ctx, Endpoint *ep, const void *buf, size_t size, Registration *mr,
                  uint64_t tag, void **request);
Status start_recv(Context *ctx, Endpoint *ep, void *buf, size_t size, Registration *mr,
                  uint64_t tag, void **request);
Status start_get(Context *ctx, Endpoint *ep, void *local, Registration *local_mr, uint64_t remote,
                 uint64_t key, size_t size, void **request);
// Posts queued requests of ep until the provider refuses one.
void flush_queues(Context *ctx, Endpoint *ep);
// Has progress flush ep's queues.
void endpoint_backlog(Context *ctx, Endpoint *ep);
// The request is handed to the provider, which now owns its context.
void mark_posted(Context *ctx, Request *r);
// Posts the next part of a request the provider just gave back (behind
// any queued ones); finishes it if the provider refuses it for good.
void repost(Context *ctx, Request *r);

// ---- framed messages (framing.cc, pull.cc)
// Whether the provider's own matching cannot be relied on (decides
// Provider::framed).
bool truncation_unsafe(const Provider &p);
// Sets up an endpoint's matching and posts its stream receives.
void frames_open(Context *ctx, Endpoint *ep);
// Cancels the stream receives (disconnect).
void frames_close(Context *ctx, Endpoint *ep);
// A receive posted in software: matched with what arrived, or waiting.
void frame_recv_start(Context *ctx, Request *r);
// Sends and later parts through the provider (attempt in post.cc).
ssize_t frame_send(Context *ctx, Request *r);
ssize_t frame_part_recv(Context *ctx, Request *r);
// A framed request's provider operation of `len` bytes completed.
void frame_completed(Context *ctx, Request *r, size_t len);
// Takes a receive out of the software matching, or a send out of the
// pulls awaiting acknowledgement; false if it is not held there.
bool frame_unpost(Context *ctx, Request *r);
// Frees the frame buffers of a request the provider no longer holds.
void frame_release(Context *ctx, Request *r);
void finish_truncated(Context *ctx, Request *r, size_t msg_size);
// Whether this process may read the peer's memory: sets ep->cma.
void cma_probe(Context *ctx, Endpoint *ep, int32_t pid, uint64_t nonce_addr, uint64_t nonce);
// The receiver's side of a pulled message: copy, acknowledge, finish.
void pull_deliver(Context *ctx, Request *r, const FrameHeader &h);
// The sender's side: its kAck arrived.
void pull_acked(Context *ctx, Endpoint *ep, const FrameHeader &h);
// Queues an acknowledgement and tries to inject it.
void ack_send(Context *ctx, Endpoint *ep, uint64_t cookie, Status status);
// Injects queued acknowledgements; false if the provider refused one.
bool acks_flush(Context *ctx, Endpoint *ep);
// iget by a cross-memory read; finishes r.
void cma_get(Context *ctx, Request *r, uint64_t remote);
// The stream and data tags of framed messages.
uint64_t stream_tag(const Context *ctx, int32_t sender);
uint64_t data_tag(const Context *ctx, int32_t sender, uint64_t cookie);

// ---- completions (completion.cc)
// Reads the completion queue until it is empty (or `max_batches` reads).
// Returns the number of completions handled.
size_t drain_cq(Context *ctx, int max_batches);
// The request is finished for the caller (it may still be posted).
void request_finish(Context *ctx, Request *r, Status status, size_t bytes);
// The caller lets go of r (after test() or cancel()).
void request_release(Context *ctx, Request *r);

// ---- cancellation and peer failure (cancel.cc)
// Ends an unfinished request with `status`: takes it out of its queue, or
// asks the provider to cancel it. With `wait`, polls (bounded) until the
// provider gives the operation back, so its buffer is no longer touched.
void request_stop(Context *ctx, Request *r, Status status, const char *why, bool wait);
// cancel(): stop and release.
Status request_cancel(Context *ctx, Request *r);
// Fails every unfinished request of ep with ERR_PEER and marks it dead.
void endpoint_fail(Context *ctx, Endpoint *ep, const std::string &why);
// The peer behind ep is gone: first take what already arrived, then fail.
void peer_lost(Context *ctx, Endpoint *ep, const std::string &why);

// ---- progress and waiting (progress.cc)
void progress(Context *ctx);
Status wait_for_work(Context *ctx, int64_t timeout_us);

// ---- liveness sockets (liveness.cc)
Status liveness_open(Context *ctx);
void liveness_close(Context *ctx);
void liveness_watch(Context *ctx, Endpoint *ep, const struct sockaddr *addr, socklen_t len,
                    uint64_t nonce);
void liveness_unwatch(Endpoint *ep);
// Accepts watchers and checks every watched peer; rate-limited unless
// `now` is set.
void liveness_tick(Context *ctx, bool now);
// File descriptors worth waking up for (listener, watched peers).
void liveness_fds(Context *ctx, std::vector<int> *fds);

// ---- what dead shm peers leave behind (leftovers.cc)
// Notes the shm region named by a peer's endpoint name.
void remember_region(Context *ctx, Endpoint *ep, const uint8_t *name, size_t len);
// Unlinks it if the peer died and its process is gone.
void reclaim_region(Context *ctx, Endpoint *ep);

// ---- memory (memory.cc)
Status mem_register(Context *ctx, void *ptr, size_t size, void **mr);
Status mem_deregister(Context *ctx, void *mr);
Status mem_pack(Context *ctx, void *mr, void *buf, size_t *size);
Status mem_get(Context *ctx, Endpoint *ep, void *local, Registration *local_mr, uint64_t remote,
               const void *rkey, size_t rkey_size, size_t size, void **request);
// The descriptor for a local buffer: the caller's registration, one made
// for this request alone (r->own_mr) when the provider needs local
// descriptors and the core passed none, or none.
Status local_descriptor(Context *ctx, Request *r, Registration *mr);
// Closes r->own_mr, if any, once the provider gave r back.
void drop_own_registration(Request *r);
// Registers a region with the access the plugin uses.
int register_region(Context *ctx, uintptr_t base, size_t len, struct fid_mr **out);

uint64_t monotonic_ns();

// ---- what the plugin tells the core before init (probe.cc, config.cc)
int32_t probe_machine(const smd_transport_host_t *host, char *why, size_t why_size);
extern const smd_transport_param_t kParams[];

}  // namespace smd_efa
