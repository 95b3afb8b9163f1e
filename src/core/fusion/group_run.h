// Running a group of calls (smd_group_start ... smd_group_end) as one
// operation: point-to-point calls are all posted first, then each
// communicator's collectives run back to back on its executor, with
// allreduces of the same datatype and op fused into balanced buffers of
// SMD_FUSION_BYTES.
#pragma once

#include <smd.h>

#include <memory>
#include <string>
#include <vector>

#include "core/coll/collective.h"
#include "core/comm/p2p_matcher.h"

namespace smd {

class Comm;

struct GroupCall {
  enum class Kind { kCollective, kSend, kRecv };
  Kind kind = Kind::kCollective;
  std::shared_ptr<Comm> comm;
  int index = 0;          // 1-based position among the group's calls
  const char *call = "";  // the entry point that queued it
  CollArgs args;          // collectives
  int peer = 0;           // point-to-point (a receive's may be SMD_ANY_SOURCE)
  void *buf = nullptr;
  size_t bytes = 0;
  int tag = 0;  // the user's tag (a receive's may be SMD_ANY_TAG)
  // Posted by run_group through the communicator's matcher (p2p_matcher.h):
  // a send's envelope and its two transfers, or a receive.
  std::shared_ptr<P2PMatcher::Envelope> envelope;
  P2PReq envelope_req, data_req;
  std::shared_ptr<P2PMatcher::Recv> recv;
  // A stream-ordered group (group_calls.cc): the stream the call named
  // (null: none), and whether its buffers are device memory. Such a group's
  // sends ask for a receipt and its receives take exactly their count, as
  // stream-ordered calls outside groups do (stream_p2p.h).
  void *stream = nullptr;
  bool on_device = false;
  bool exact = false;
  std::shared_ptr<P2PMatcher::Receipt> receipt;
  P2PReq receipt_req;
  // Filled by run_group: the call's outcome and, for receives, the bytes
  // that arrived.
  smd_result_t result = SMD_SUCCESS;
  std::string error;
  size_t moved_bytes = 0;
};

// Runs every call; each one's outcome lands in its GroupCall. Throws the
// first failure (smd::Error naming the call's index and entry point).
// `on_worker`: the caller is the communicator's worker thread (the stream
// proxy), which runs the collectives itself rather than queueing them
// behind itself.
void run_group(std::vector<GroupCall> &calls, bool on_worker = false);

// SMD_FUSION_BYTES, read once.
size_t fusion_bytes();

}  // namespace smd
