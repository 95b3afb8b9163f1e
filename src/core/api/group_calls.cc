#include "core/api/group_calls.h"

#include <cstring>
#include <string>
#include <vector>

#include "core/api/handles.h"
#include "core/fusion/group_run.h"
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
  // Every request of the group completes with the call's outcome.
  void complete_requests() {
    for (size_t i = 0; i < queued.size(); ++i) {
      smd_request_t *r = requests[i];
      if (!r) continue;
      const GroupCall &g = queued[i];
      if (g.kind == GroupCall::Kind::kRecv) r->count = g.moved_bytes / r->elem_size;
      r->task->complete(g.result, g.error);
    }
  }
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
                            smd_request_t **request) {
  GroupCall &g = queue_call(c, request, elems, 1);
  g.kind = GroupCall::Kind::kCollective;
  g.args = a;
}

void group_queue_p2p(const std::shared_ptr<Comm> &c, bool send, void *buf, size_t bytes,
                     size_t elem_size, int peer, int tag, smd_request_t **request) {
  GroupCall &g = queue_call(c, request, bytes / elem_size, elem_size);
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
  if (group.failure != SMD_SUCCESS) {
    // A call was refused: nothing of the group runs, on any communicator,
    // so each stays usable.
    std::string why = "not run: " + group.failure_message;
    for (GroupCall &g : group.queued) {
      g.result = group.failure;
      g.error = why;
    }
    throw Error(group.failure, group.failure_message + "; no call of the group ran");
  }
  run_group(group.queued);
}

}  // namespace smd
