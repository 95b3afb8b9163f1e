// The plugin's state: a context per world (init .. finalize) and an
// endpoint per connected peer, plus the internal entry points the
// per-concern source files share.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_set>
#include <vector>

#include "cell_kind.h"
#include "host_calls.h"
#include "layout.h"
#include "node_identity.h"
#include "request.h"
#include "shared_file.h"
#include "smd_transport.h"
#include "tag_queues.h"

namespace smd_shm {

using Status = smd_transport_status_t;

struct Context;

// A message that arrived before a matching receive was posted. Eager data
// is copied here; a rendezvous message keeps only its descriptor.
struct Unexpected {
  uint64_t tag = 0;
  uint64_t size = 0;
  bool rendezvous = false;
  uint64_t send_id = 0;  // rendezvous: the sender's request id
  uint64_t addr = 0;     // rendezvous: the sender's buffer address
  char *data = nullptr;  // eager: malloc'd copy (nullptr when size is 0)
  Unexpected *qprev = nullptr, *qnext = nullptr;
};

// Something waiting, in order, for room in the peer's ring.
struct OutItem {
  enum Kind : uint8_t { kEagerSend, kRtsSend, kControl } kind;
  Request *req;     // kEagerSend, kRtsSend; nullptr once cancelled
  CellHeader cell;  // kControl
};

// A run of kData cells to the peer: a send after CTS, or the answer to a
// peer's iget, when CMA cannot be used.
struct Stream {
  Request *req;  // the send it completes; nullptr for an iget answer
  const char *src;
  uint64_t recv_id;  // the peer's receiving request
  uint64_t offset;
  uint64_t total;
};

struct Endpoint {
  uint64_t magic;
  Context *ctx;
  int32_t peer;        // world rank
  int32_t peer_local;  // local rank: index of our ring in its region
  pid_t pid;
  int pidfd = -1;  // -1 for the self endpoint
  bool self = false;
  bool dead = false;
  bool cma = true;  // CMA works towards this peer
  bool in_senders = false;
  std::string death;  // why the peer is considered gone

  SharedMapping peer_region;         // unused for self
  RegionHeader *peer_hdr = nullptr;  // to wake the peer
  Ring *out = nullptr;               // our ring in the peer's region
  Ring *in = nullptr;                // the peer's ring in our region
  uint64_t out_head = 0;             // producer: next cell to publish
  uint64_t out_published = 0;        // producer: head the peer can see
  uint64_t out_tail = 0;             // producer: last tail read
  uint64_t in_tail = 0;              // consumer: next cell to read

  std::deque<OutItem> queue;
  std::deque<Stream> streams;
  TagQueues<Request> posted;
  TagQueues<Unexpected> unexpected;
  RequestList pending;  // every unfinished request on this endpoint
};

constexpr uint64_t kEndpointMagic = 0x5045445f4d4853ull;  // "SHM_DEP"
constexpr uint64_t kContextMagic = 0x5854435f4d4853ull;   // "SHM_CTX"

struct Registration {
  uint64_t magic;
  char *ptr;
  size_t size;
};
constexpr uint64_t kRegistrationMagic = 0x4745525f4d4853ull;  // "SHM_REG"

// A created segment keeps its memfd open (peers attach through it); an
// attached one holds only the mapping.
struct Segment {
  SharedMapping map;
};

struct Context {
  uint64_t magic = kContextMagic;
  const smd_transport_host_t *host = nullptr;
  int32_t rank = 0, world_size = 0, local_rank = 0, local_size = 0;
  pid_t pid = 0;
  NodeIdentity node{};

  SharedMapping region;
  uint64_t region_id = 0;
  RegionHeader *hdr = nullptr;

  std::vector<Endpoint *> by_local;   // connected endpoint per local rank
  std::vector<Endpoint *> endpoints;  // all connected, polled by progress
  std::vector<Endpoint *> senders;    // endpoints with queued output
  std::vector<Request *> copies;      // receives with a CMA copy under way
  size_t copy_cursor = 0;             // which copy a progress pass serves first
  RequestPool pool;
  uint64_t unfinished = 0;  // requests not yet completed
  uint64_t events = 0;      // cells consumed or requests finished
  uint64_t next_liveness_ns = 0;

  bool cma = true;
  size_t eager_limit = 0;
  size_t cma_chunk = 0;

  std::unordered_set<Registration *> registrations;
  std::unordered_set<Segment *> segments;
};

// ---- errors, logging, parameters (../util/host_calls.h)
using smd_plugin::fail;
using smd_plugin::fail_host;
using smd_plugin::log_line;
using smd_plugin::param;

// ---- lifecycle (context.cc, connect.cc)
Status context_init(const smd_transport_host_t *host, void **out);
Status context_finalize(Context *ctx);
Status context_address(Context *ctx, void *buf, size_t *size);
Status endpoint_connect(Context *ctx, int32_t peer, const void *address, size_t size, void **out);
Status endpoint_disconnect(Context *ctx, Endpoint *ep);
void endpoint_destroy(Context *ctx, Endpoint *ep);

// ---- requests (completion.cc)
Request *request_start(Context *ctx, Endpoint *ep, ReqKind kind, void *buf, size_t size,
                       uint64_t tag);
void request_complete(Context *ctx, Request *r, Status status, uint64_t bytes);
// Unlink an unfinished request from wherever its phase keeps it.
void request_unlink(Context *ctx, Request *r);

// ---- sending (send.cc)
Status send_start(Context *ctx, Endpoint *ep, const void *buf, size_t size, uint64_t tag,
                  void **request);
void send_control(Context *ctx, Endpoint *ep, uint32_t kind, uint64_t id, uint64_t size,
                  uint64_t tag);
void send_stream(Context *ctx, Endpoint *ep, const Stream &s);
void send_flush(Context *ctx, Endpoint *ep);
bool send_idle(Endpoint *ep);
// Whether the peer's ring has room for what ep has queued.
bool send_can_advance(Endpoint *ep);

// ---- receiving (receive.cc)
Status recv_start(Context *ctx, Endpoint *ep, void *buf, size_t size, uint64_t tag, void **request);
// Consume every published cell of ep's inbound ring; true if any.
bool recv_drain(Context *ctx, Endpoint *ep);
bool recv_ring_nonempty(Endpoint *ep);
// Complete a receive of a msg_size-byte message, `copied` bytes delivered
// (ERR_TRUNCATED when the message was larger than the buffer).
void recv_finish(Context *ctx, Request *r, uint64_t msg_size, uint64_t copied);

// ---- rendezvous (rendezvous.cc)
void rendezvous_match(Context *ctx, Request *r, uint64_t send_id, uint64_t addr, uint64_t msg_size);
void rendezvous_copy_step(Context *ctx);
void rendezvous_on_ack(Context *ctx, Endpoint *ep, const CellHeader &h);
void rendezvous_on_cts(Context *ctx, Endpoint *ep, const CellHeader &h);
void rendezvous_on_data(Context *ctx, Endpoint *ep, const CellHeader &h,
                        const unsigned char *payload);
void rendezvous_on_retract(Context *ctx, Endpoint *ep, uint64_t send_id);
void rendezvous_on_abort(Context *ctx, Endpoint *ep, uint64_t recv_id);
void rendezvous_on_get(Context *ctx, Endpoint *ep, const CellHeader &h);

// ---- peers (liveness.cc)
void liveness_tick(Context *ctx);
// Poll ep's peer now; true if it is (now known) dead.
bool liveness_check(Context *ctx, Endpoint *ep);
void peer_died(Context *ctx, Endpoint *ep, const char *how);

// ---- waking (doorbell.cc)
// After publishing cells into a peer's ring: wake it if it sleeps.
void doorbell_ring(RegionHeader *hdr);
Status wait_for_work(Context *ctx, int64_t timeout_us);

// ---- progress (progress.cc)
void progress(Context *ctx);

// ---- memory (rma.cc, segments.cc)
Status mem_register(Context *ctx, void *ptr, size_t size, void **mr);
Status mem_deregister(Context *ctx, void *mr);
Status mem_pack(Context *ctx, void *mr, void *buf, size_t *size);
Status rma_get(Context *ctx, Endpoint *ep, void *local, uint64_t remote, const void *rkey,
               size_t rkey_size, size_t size, void **request);
Status segment_create(Context *ctx, size_t size, void **ptr, void **segment, void *handle,
                      size_t *handle_size);
Status segment_attach(Context *ctx, Endpoint *ep, const void *handle, size_t handle_size,
                      void **ptr, size_t *size, void **segment);
Status segment_release(Context *ctx, Segment *segment);

// ---- cross-memory attach (cma.cc)
// Read size bytes at `remote` of process pid into local; returns bytes
// read, or -errno.
long cma_read(pid_t pid, void *local, uint64_t remote, size_t size);
bool cma_probe();

}  // namespace smd_shm
