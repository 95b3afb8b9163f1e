// The default agreement check (SMD_CHECK=fast) of a collective that runs
// over point-to-point messages, at no extra round trip: each member sends
// its call's fingerprint to its ring neighbours as the call starts, beside
// the algorithm's own first messages, and compares theirs when the
// algorithm is done. Ranks that disagree anywhere have a neighbouring pair
// that disagrees; the call's fingerprint also salts its message tags, so
// disagreeing ranks never consume each other's data: their algorithms stall
// and the neighbours' check, polled by long waits, ends them with
// SMD_ERR_MISMATCH naming both calls. A member whose call fails tells its
// neighbours (a poison message, forwarded around the ring) and the store
// (for waits elsewhere), so the failure has one outcome on every rank.
#pragma once

#include <smd.h>

#include <mutex>
#include <string>

#include "core/coll/agree/call_fingerprint.h"
#include "core/comm/communicator.h"
#include "core/util/error.h"

namespace smd {

struct CheckChannel;

class CallCheck final : public WaitHook {
 public:
  // Sends this member's fingerprint of `a` to its neighbours and posts the
  // receives of theirs.
  CallCheck(Comm &c, const CollArgs &a);
  ~CallCheck();
  CallCheck(const CallCheck &) = delete;
  CallCheck &operator=(const CallCheck &) = delete;

  // After the algorithm succeeded: waits for the neighbours' fingerprints
  // (sent when they started this call) and throws SMD_ERR_MISMATCH when
  // one differs, or the error a neighbour reported.
  void finish();

  // After the algorithm or finish() threw `e`: the error this rank reports
  // (SMD_ERR_MISMATCH when a neighbour's fingerprint shows it ran another
  // call, whatever the algorithm ran into), which the neighbours are told.
  Error failed(const Error &e);

  // WaitHook: a neighbour's foreign fingerprint or poison ends the wait.
  void poll() override;

 private:
  void compare(int from, const CallFingerprint &theirs) const;
  Comm &c_;
  CheckChannel &ch_;
  CallFingerprint mine_;
  CollKind kind_;
  ReqSet reqs_;  // sends of mine, receives of theirs
  P2PReq *recv_[2] = {nullptr, nullptr};
  CallFingerprint theirs_[2];
  // poll() may come from the rail worker of a hierarchical call, and
  // from finish()'s own wait on this thread.
  std::recursive_mutex mu_;
};

}  // namespace smd
