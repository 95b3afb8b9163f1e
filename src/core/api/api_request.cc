// Request entry points: test, wait, wait with a deadline, count, free.
#include <smd.h>

#include <sched.h>

#include <thread>

#include "core/api/group_calls.h"
#include "core/api/guard.h"
#include "core/api/handles.h"
#include "core/api/staged_p2p.h"
#include "core/api/validate.h"

using namespace smd;

namespace {

smd_request_t *live(smd_request_t *r) {
  if (!r) fail(SMD_ERR_INVALID_ARGUMENT, "request is NULL");
  if (!request_registry().contains(r))
    fail(SMD_ERR_INVALID_USAGE, "request %p is not live (freed, or never created)",
         static_cast<void *>(r));
  return r;
}

void finish(smd_request_t *r, smd_result_t code, std::string message) {
  r->finished = true;
  r->result = code;
  r->error = std::move(message);
}

// Advance the request without blocking; true once finished. Caller holds r->mu.
bool poll(smd_request_t *r) {
  if (r->finished) return true;
  if (!r->is_p2p) {
    if (!r->task->done()) return false;
    finish(r, r->task->result(), r->task->error());
    return true;
  }
  try {
    if (r->user_recv) {
      if (!r->comm->user_p2p().test(*r->user_recv)) return false;
      land_p2p_recv(*r, r->user_recv->bytes);
      r->count = r->user_recv->bytes / r->elem_size;
    } else {
      // A user send: its envelope, then its payload.
      if (!r->envelope_req.done && !r->comm->test(r->envelope_req)) return false;
      if (!r->comm->test(r->p2p)) return false;
      r->count = r->p2p.bytes / r->elem_size;
    }
    finish(r, SMD_SUCCESS, "");
  } catch (const Error &e) {
    finish(r, e.code(), e.message());
  }
  return true;
}

// Block until finished or the deadline; true if finished.
bool block(smd_request_t *r, const Deadline &d) {
  if (poll(r)) return true;
  if (!r->is_p2p) {
    if (!r->task->wait_until(d)) return false;
    return poll(r);
  }
  if (d.at_ns() == INT64_MAX) {
    // Waits with the communicator's own deadline and failure checks.
    try {
      if (r->user_recv) {
        r->comm->user_p2p().wait(*r->user_recv, "wait");
        land_p2p_recv(*r, r->user_recv->bytes);
        r->count = r->user_recv->bytes / r->elem_size;
      } else {
        P2PReq *both[] = {&r->envelope_req, &r->p2p};
        r->comm->wait_ptrs(both, 2, "wait");
        r->count = r->p2p.bytes / r->elem_size;
      }
      finish(r, SMD_SUCCESS, "");
    } catch (const Error &e) {
      finish(r, e.code(), e.message());
    }
    return true;
  }
  Backoff b(r->comm->ctx().wait_policy());
  while (!poll(r)) {
    if (d.expired()) return false;
    int64_t us = 0;
    switch (b.next(&us)) {
      case Backoff::Action::kSpin: break;
      case Backoff::Action::kYield: sched_yield(); break;
      case Backoff::Action::kSleep:
        std::this_thread::sleep_for(std::chrono::microseconds(us < 500 ? us : 500));
        break;
    }
  }
  return true;
}

// Blocks with no deadline of its own (wait, free): a group's request that
// another thread's open group holds completes at that group's end, which
// may never come while this thread waits (the group's thread may be
// waiting for this one): SMD_TIMEOUT bounds it, then SMD_ERR_TIMEOUT.
// The group's own thread was refused earlier (check_not_in_open_group).
void block_unbounded(smd_request_t *r, const char *what) {
  if (!r->from_group) {
    block(r, Deadline::never());
    return;
  }
  int64_t ms = r->comm->ctx().timeout_ms();
  if (!block(r, Deadline::after_ms(ms)))
    fail(SMD_ERR_TIMEOUT,
         "%s: the request belongs to a group that another thread has open; it completes at "
         "that thread's smd_group_end, which did not come within SMD_TIMEOUT (%lld s)%s",
         what, static_cast<long long>(ms / 1000),
         std::string(what) == "smd_request_free" ? "; the request stays live" : "");
}

void report(smd_request_t *r) {
  if (r->result != SMD_SUCCESS)
    throw OperationError(r->result,
                         operation_message(Error(r->result, r->error), r->op, r->buffer));
}

}  // namespace

namespace smd {
void request_status(const smd_request &r, smd_status_t *out) {
  const P2PMatcher::Recv *m = r.user_recv.get();
  bool matched = m && m->matched;
  out->source = matched ? m->source : -1;
  out->tag = matched ? m->msg_tag : -1;
  out->bytes = matched ? m->bytes : r.count * r.elem_size;
  out->count = out->bytes / r.elem_size;
}
}  // namespace smd

extern "C" {

SMD_API smd_result_t smd_request_test(smd_request_t *request, int *done) {
  return guarded("smd_request_test", [&] {
    if (!done) fail(SMD_ERR_INVALID_ARGUMENT, "done is NULL");
    smd_request_t *r = live(request);
    std::lock_guard<std::mutex> lock(r->mu);
    *done = poll(r) ? 1 : 0;
    if (*done) report(r);
  });
}

SMD_API smd_result_t smd_request_wait(smd_request_t *request) {
  return guarded("smd_request_wait", [&] {
    smd_request_t *r = live(request);
    check_not_in_open_group(r);
    std::lock_guard<std::mutex> lock(r->mu);
    block_unbounded(r, "smd_request_wait");
    report(r);
  });
}

SMD_API smd_result_t smd_request_wait_timeout(smd_request_t *request, int64_t timeout_ms) {
  return guarded("smd_request_wait_timeout", [&] {
    smd_request_t *r = live(request);
    std::lock_guard<std::mutex> lock(r->mu);
    if (!block(r, Deadline::after_ms(timeout_ms < 0 ? 0 : timeout_ms)))
      throw Error(SMD_IN_PROGRESS, "");
    report(r);
  });
}

SMD_API smd_result_t smd_request_get_count(smd_request_t *request, size_t *count) {
  return guarded("smd_request_get_count", [&] {
    if (!count) fail(SMD_ERR_INVALID_ARGUMENT, "count is NULL");
    smd_request_t *r = live(request);
    std::lock_guard<std::mutex> lock(r->mu);
    if (!poll(r)) fail(SMD_ERR_INVALID_USAGE, "the operation has not finished yet");
    *count = r->count;
  });
}

SMD_API smd_result_t smd_status_init(smd_status_t *status) {
  return guarded("smd_status_init", [&] {
    require_out(status, "status");
    *status = smd_status_t SMD_STATUS_INIT;
  });
}

SMD_API smd_result_t smd_request_get_status(smd_request_t *request, smd_status_t *status) {
  return guarded("smd_request_get_status", [&] {
    check_status(status);
    smd_request_t *r = live(request);
    std::lock_guard<std::mutex> lock(r->mu);
    if (!poll(r)) fail(SMD_ERR_INVALID_USAGE, "the operation has not finished yet");
    request_status(*r, status);
  });
}

SMD_API smd_result_t smd_request_free(smd_request_t *request) {
  return guarded("smd_request_free", [&] {
    if (!request) fail(SMD_ERR_INVALID_ARGUMENT, "request is NULL");
    check_not_in_open_group(request);
    // Its buffers are in use until it finishes: it stays live until then
    // (a group's request that another thread's group holds may not finish).
    {
      smd_request_t *r = live(request);
      std::lock_guard<std::mutex> lock(r->mu);
      block_unbounded(r, "smd_request_free");
    }
    if (!request_registry().remove(request))
      fail(SMD_ERR_INVALID_USAGE, "request %p is not live (freed twice?)",
           static_cast<void *>(request));
    std::unique_ptr<smd_request_t> r(request);
    report(r.get());
  });
}

}  // extern "C"
