// One collective call's entry in its communicator's flight recorder, for
// the length of run_collective: begun on construction, closed as done on
// a normal exit, as failed (and the recorder dumped) by failed() or when
// an exception leaves the scope.
#pragma once

#include <smd.h>

#include <exception>

#include "core/coll/collective.h"
#include "core/comm/communicator.h"

namespace smd {

inline FlightCall flight_call(const CollArgs &a) {
  return FlightCall{coll_name(a.kind), static_cast<int>(a.datatype), static_cast<int>(a.op),
                    static_cast<uint64_t>(a.count), a.root};
}

class FlightScope {
 public:
  FlightScope(Comm &c, const CollArgs &a)
      : rec_(c.flight()), exceptions_(std::uncaught_exceptions()) {
    if (!rec_.on()) return;
    seq_ = rec_.begin(flight_call(a), "");
  }
  ~FlightScope() {
    if (seq_ == FlightRecorder::kNone) return;
    if (std::uncaught_exceptions() > exceptions_) failed(SMD_ERR_INTERNAL);
    else rec_.end(seq_, SMD_SUCCESS);
  }
  FlightScope(const FlightScope &) = delete;
  FlightScope &operator=(const FlightScope &) = delete;

  // The call failed with `code`: recorded, and the ring written out.
  void failed(smd_result_t code) {
    if (seq_ == FlightRecorder::kNone) return;
    rec_.end(seq_, code);
    seq_ = FlightRecorder::kNone;
    rec_.dump(smd_result_string(code));
  }

 private:
  FlightRecorder &rec_;
  int exceptions_;
  uint64_t seq_ = FlightRecorder::kNone;
};

}  // namespace smd
