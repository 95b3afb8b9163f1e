// The calling thread's open group (smd_group_start ... smd_group_end):
// collective and point-to-point entry points queue their validated calls
// here instead of running them, and the outermost smd_group_end runs them
// all (fusion/group_run.h). Per thread, like NCCL's groups.
#pragma once

#include <smd.h>

#include <memory>

#include "core/coll/collective.h"

namespace smd {

class Comm;

// This thread's group nesting depth (0: none open). Read on every call:
// a plain thread-local, no constructor to run on access.
extern constinit thread_local int tls_group_depth;

// True while this thread is inside smd_group_start ... smd_group_end.
inline bool group_open() { return tls_group_depth > 0; }

// guarded()'s hooks: an entry point starts, or failed with `message`.
// Calls that communicate count as the group's calls (numbered from 1);
// the first failure among them fails the whole group at smd_group_end.
void group_call_counted(const char *call);
inline void group_call_started(const char *call) {
  if (tls_group_depth > 0) group_call_counted(call);
}
void group_call_failed(const char *call, smd_result_t code, const std::string &message);

// Queue a validated collective (elems: what the request reports as its
// count) or point-to-point transfer of the current call; `request` is null
// for the blocking forms, else it receives a request that completes when
// the group has run.
// `stream`: the stream the call named (null: none). A group whose calls
// name a stream, with device memory among them, runs as one unit on the
// stream proxy (all its calls must name the same stream).
void group_queue_collective(const std::shared_ptr<Comm> &c, const CollArgs &a, size_t elems,
                            smd_request_t **request, void *stream = nullptr);
void group_queue_p2p(const std::shared_ptr<Comm> &c, bool send, void *buf, size_t bytes,
                     size_t elem_size, int peer, int tag, smd_request_t **request,
                     void *stream = nullptr, bool on_device = false);

// Fails with SMD_ERR_INVALID_USAGE if `r` belongs to this thread's open
// group: waiting for it before smd_group_end would wait forever.
void check_not_in_open_group(const smd_request_t *r);

// smd_group_start / smd_group_end.
void group_start();
void group_end();

}  // namespace smd
