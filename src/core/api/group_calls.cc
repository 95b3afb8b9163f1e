#include "core/api/group_calls.h"

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "core/api/handles.h"
#include "core/coll/algorithms/device_staging.h"
#include "core/coll/stream_proxy.h"
#include "core/comm/communicator.h"
#include "core/fusion/group_run.h"
#include "core/gpu/cuda_api.h"
#include "core/gpu/device_ops.h"
#include "core/gpu/pointer_kind.h"
#include "core/util/error.h"

namespace smd {

namespace {

// The entry points whose calls a group queues (and numbers).
bool communicates(const char *call) {
  static const char *const names[] = {"smd_allreduce",
                                      "smd_iallreduce",
                                      "smd_allgather",
                                      "smd_iallgather",
                                      "smd_reduce_scatter",
                                      "smd_ireduce_scatter",
                                      "smd_broadcast",
                                      "smd_ibroadcast",
                                      "smd_reduce",
                                      "smd_ireduce",
                                      "smd_alltoall",
                                      "smd_ialltoall",
                                      "smd_barrier",
                                      "smd_ibarrier",
                                      "smd_send",
                                      "smd_isend",
                                      "smd_recv",
                                      "smd_irecv",
                                      "smd_allgatherv",
                                      "smd_iallgatherv",
                                      "smd_reduce_scatterv",
                                      "smd_ireduce_scatterv",
                                      "smd_alltoallv",
                                      "smd_ialltoallv"};
  for (const char *n : names)
    if (!strcmp(n, call)) return true;
  return false;
}

// Every request of a group completes with its call's outcome.
void complete_requests(const std::vector<GroupCall> &calls,
                       const std::vector<smd_request_t *> &requests) {
  for (size_t i = 0; i < calls.size(); ++i) {
    smd_request_t *r = requests[i];
    if (!r) continue;
    const GroupCall &g = calls[i];
    if (g.kind == GroupCall::Kind::kRecv) r->count = g.moved_bytes / r->elem_size;
    r->task->complete(g.result, g.error);
  }
}

struct OpenGroup {
  int calls = 0;             // communicating calls seen, failed ones included
  const char *current = "";  // the entry point running now
  smd_result_t failure = SMD_SUCCESS;
  std::string failure_message;  // of the first failed call
  std::vector<GroupCall> queued;
  std::vector<smd_request_t *> requests;  // parallel to queued; null for blocking forms

  void reset() {
    calls = 0;
    failure = SMD_SUCCESS;
    failure_message.clear();
    queued.clear();
    requests.clear();
  }
  void complete_requests() { smd::complete_requests(queued, requests); }
  // A thread that exits inside a group leaves no request waiting forever.
  ~OpenGroup() {
    for (GroupCall &g : queued) {
      g.result = SMD_ERR_INVALID_USAGE;
      g.error = "the thread that queued this call ended without smd_group_end";
    }
    complete_requests();
  }
};

thread_local OpenGroup group;

GroupCall &queue_call(const std::shared_ptr<Comm> &c, smd_request_t **request, size_t elems,
                      size_t elem_size) {
  GroupCall g;
  g.comm = c;
  g.index = group.calls;
  g.call = group.current;
  smd_request_t *r = nullptr;
  if (request) {
    auto owned = std::make_unique<smd_request>();
    owned->comm = c;
    owned->count = elems;
    owned->elem_size = elem_size;
    owned->task = std::make_shared<Task>(nullptr);
    owned->from_group = true;
    r = owned.release();
  }
  group.queued.push_back(std::move(g));
  group.requests.push_back(r);
  if (r) {
    request_registry().add(r);
    *request = r;
  }
  return group.queued.back();
}

// The stream a group's calls name, the same for all (else
// SMD_ERR_INVALID_ARGUMENT); null when none names one or no call is on
// device memory (host memory with a stream waited for it at the call).
void *checked_group_stream(const std::vector<GroupCall> &calls) {
  const GroupCall *named = nullptr, *device = nullptr;
  for (const GroupCall &g : calls) {
    if (g.stream && !named) named = &g;
    if (g.on_device && !device) device = &g;
  }
  if (!named) return nullptr;
  // The first call whose `field` is not the naming call's, or null.
  auto unlike = [&](auto field) -> const GroupCall * {
    for (const GroupCall &g : calls)
      if (g.*field != named->*field) return &g;
    return nullptr;
  };
  if (const GroupCall *g = unlike(&GroupCall::stream))
    fail(SMD_ERR_INVALID_ARGUMENT,
         "call %d (%s) of the group names stream %p but call %d (%s) names %s: all calls of a "
         "group that names a stream must name the same one",
         named->index, named->call, named->stream, g->index, g->call,
         g->stream ? format("%p", g->stream).c_str() : "none (NULL)");
  if (!device) return nullptr;
  if (const GroupCall *g = unlike(&GroupCall::comm))
    fail(SMD_ERR_NOT_SUPPORTED,
         "calls %d (%s) and %d (%s) of a stream-ordered group are on different communicators; "
         "a group with a stream runs on one communicator's stream proxy (not yet on several)",
         named->index, named->call, g->index, g->call);
  return named->stream;
}

// Whether a NULL-stream group moves device memory point to point (then
// the stream proxy stages it, as for a stream); its calls must then be on
// one communicator, whose proxy runs them.
bool device_p2p_on_one_comm(const std::vector<GroupCall> &calls) {
  const GroupCall *device = nullptr;
  for (const GroupCall &g : calls)
    if (g.kind != GroupCall::Kind::kCollective && g.on_device && !device) device = &g;
  if (!device) return false;
  for (const GroupCall &g : calls)
    if (g.comm != device->comm)
      fail(SMD_ERR_NOT_SUPPORTED,
           "calls %d (%s) and %d (%s) of a group moving device memory point to point are on "
           "different communicators; such a group runs on one communicator's stream proxy (not "
           "yet on several)",
           device->index, device->call, g.index, g.call);
  return true;
}

const void *device_buffer(const GroupCall &g) {
  if (g.kind != GroupCall::Kind::kCollective) return g.buf;
  return g.args.recvbuf ? g.args.recvbuf : g.args.sendbuf;
}

// On the proxy's thread: the group's device point-to-point payloads staged
// through pinned memory (slot 1: its collectives stage through slot 0
// while the payloads are in flight), then the group as outside streams.
void run_staged_group(std::vector<GroupCall> &calls) {
  std::vector<void *> device_bufs(calls.size(), nullptr);
  size_t total = 0;
  for (const GroupCall &g : calls)
    if (g.kind != GroupCall::Kind::kCollective && g.on_device) total += (g.bytes + 63) / 64 * 64;
  uint8_t *host = pinned_staging(total, 1);
  size_t at = 0;
  for (size_t i = 0; i < calls.size(); ++i) {
    GroupCall &g = calls[i];
    if (g.kind == GroupCall::Kind::kCollective || !g.on_device) continue;
    device_bufs[i] = g.buf;
    g.buf = host + at;
    g.exact = true;
    if (g.kind == GroupCall::Kind::kSend) stage_copy(g.buf, device_bufs[i], g.bytes);
    at += (g.bytes + 63) / 64 * 64;
  }
  stage_sync();
  try {
    run_group(calls, /*on_worker=*/true);
  } catch (const Error &) {
    // Each call's outcome is in its GroupCall; the receives that arrived
    // still land.
  }
  for (size_t i = 0; i < calls.size(); ++i)
    if (calls[i].kind == GroupCall::Kind::kRecv && device_bufs[i] && calls[i].result == SMD_SUCCESS)
      stage_copy(device_bufs[i], calls[i].buf, calls[i].moved_bytes);
  stage_sync();
}

// The whole group queued as one unit on its communicator's stream proxy:
// smd_group_end returns at once, the requests complete when it has run.
std::shared_ptr<Task> run_group_on_stream(void *stream) {
  auto calls = std::make_shared<std::vector<GroupCall>>(std::move(group.queued));
  auto requests = std::make_shared<std::vector<smd_request_t *>>(std::move(group.requests));
  group.queued.clear();
  group.requests.clear();
  const GroupCall *first_device = nullptr;
  for (const GroupCall &g : *calls)
    if (g.on_device && !first_device) first_device = &g;
  Comm &c = *calls->front().comm;
  // Set by whichever completes the requests: the proxy's task, or the
  // refusal below when the task never ran.
  auto finished = std::make_shared<std::atomic<bool>>(false);
  try {
    c.check_usable();
    return run_work_on_stream(c, gpu::classify_pointer(device_buffer(*first_device)).device, stream,
                              [calls, requests, finished] {
                                struct Complete {  // whatever happens, the requests finish
                                  std::vector<GroupCall> &calls;
                                  std::vector<smd_request_t *> &requests;
                                  std::atomic<bool> &finished;
                                  ~Complete() {
                                    if (!finished.exchange(true))
                                      complete_requests(calls, requests);
                                  }
                                } complete{*calls, *requests, *finished};
                                try {
                                  run_staged_group(*calls);
                                } catch (const Error &e) {
                                  for (GroupCall &g : *calls)
                                    if (g.result == SMD_SUCCESS)
                                      g.result = e.code(), g.error = e.message();
                                }
                                for (const GroupCall &g : *calls)
                                  if (g.result != SMD_SUCCESS) throw Error(g.result, g.error);
                              });
  } catch (const Error &e) {
    // Refused before it ran (the communicator failed or is going): the
    // requests must not wait for ever.
    if (!finished->exchange(true)) {
      for (GroupCall &g : *calls) g.result = e.code(), g.error = e.message();
      complete_requests(*calls, *requests);
    }
    throw;
  }
}

}  // namespace

constinit thread_local int tls_group_depth = 0;

void group_call_counted(const char *call) {
  group.current = call;
  if (communicates(call)) ++group.calls;
}

void group_call_failed(const char *call, smd_result_t code, const std::string &message) {
  if (tls_group_depth == 0 || !communicates(call) || group.failure != SMD_SUCCESS) return;
  group.failure = code;
  char head[96];
  snprintf(head, sizeof head, "call %d (%s) of the group failed: ", group.calls, call);
  group.failure_message = head + message;
}

void group_queue_collective(const std::shared_ptr<Comm> &c, const CollArgs &a, size_t elems,
                            smd_request_t **request, void *stream) {
  GroupCall &g = queue_call(c, request, elems, 1);
  g.kind = GroupCall::Kind::kCollective;
  g.args = a;
  g.stream = stream;
  g.on_device = a.memory == MemoryKind::kDevice;
}

void group_queue_p2p(const std::shared_ptr<Comm> &c, bool send, void *buf, size_t bytes,
                     size_t elem_size, int peer, int tag, smd_request_t **request, void *stream,
                     bool on_device) {
  GroupCall &g = queue_call(c, request, bytes / elem_size, elem_size);
  g.stream = stream;
  g.on_device = on_device;
  g.kind = send ? GroupCall::Kind::kSend : GroupCall::Kind::kRecv;
  g.buf = buf;
  g.bytes = bytes;
  g.peer = peer;
  g.tag = tag;
}

void check_not_in_open_group(const smd_request_t *r) {
  if (tls_group_depth == 0) return;
  for (const smd_request_t *q : group.requests)
    if (q == r)
      fail(SMD_ERR_INVALID_USAGE,
           "the request belongs to this thread's open group: it completes at smd_group_end");
}

void group_start() {
  if (tls_group_depth == 0) group.reset();
  ++tls_group_depth;
}

void group_end() {
  if (tls_group_depth == 0)
    fail(SMD_ERR_INVALID_USAGE,
         "no group is open on this thread (smd_group_end without smd_group_start)");
  if (--tls_group_depth > 0) return;
  // Whatever happens below, the group is over and its requests complete.
  struct Close {
    ~Close() {
      group.complete_requests();
      group.reset();
    }
  } close;
  // A call refused: nothing of the group runs, on any communicator, so
  // each stays usable.
  auto refuse = [](smd_result_t code, const std::string &message) {
    std::string why = "not run: " + message;
    for (GroupCall &g : group.queued) {
      g.result = code;
      g.error = why;
    }
    throw Error(code, message + "; no call of the group ran");
  };
  if (group.failure != SMD_SUCCESS) refuse(group.failure, group.failure_message);
  void *stream = nullptr;
  bool device_p2p = false;
  try {
    stream = checked_group_stream(group.queued);
    device_p2p = !stream && device_p2p_on_one_comm(group.queued);
  } catch (const Error &e) {
    refuse(e.code(), e.message());
  }
  if (stream) {
    run_group_on_stream(stream);
    return;
  }
  if (!device_p2p) return run_group(group.queued);
  // Device point-to-point on the NULL stream: staged by the stream proxy
  // on the legacy default stream, and over when smd_group_end returns.
  std::shared_ptr<Task> task = run_group_on_stream(nullptr);
  task->wait_until(Deadline::never());
  if (task->result() != SMD_SUCCESS) throw Error(task->result(), task->error());
}

}  // namespace smd
