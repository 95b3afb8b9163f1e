// One collective call's records, for the length of run_collective: its
// entry in the communicator's flight recorder (begun on construction,
// closed as done by done(), as failed, with the recorder dumped, by
// failed() or when the scope ends otherwise: an exception left it) and,
// with SMD_TRACE, its event on the timeline.
#pragma once

#include <smd.h>

#include "core/coll/collective.h"
#include "core/comm/communicator.h"
#include "core/util/dtype.h"

namespace smd {

inline FlightCall flight_call(const CollArgs &a) {
  return FlightCall{coll_name(a.kind), static_cast<int>(a.datatype), static_cast<int>(a.op),
                    static_cast<uint64_t>(a.count), a.root};
}

class FlightScope {
 public:
  FlightScope(Comm &c, const CollArgs &a) : comm_(c), args_(a), rec_(c.flight()) {
    if (a.unrecorded) return;
    if (rec_.on()) seq_ = rec_.begin(flight_call(a), "");
    if (c.ctx().tracer()) trace_start_us_ = Tracer::now_us();
  }
  // Without done() or failed(), an exception is leaving the call (asking
  // std::uncaught_exceptions() instead costs a thread-local access per call).
  ~FlightScope() { failed(SMD_ERR_INTERNAL); }
  FlightScope(const FlightScope &) = delete;
  FlightScope &operator=(const FlightScope &) = delete;

  // The call succeeded.
  void done() { finish(SMD_SUCCESS); }
  // The call failed with `code`: recorded, and the ring written out.
  void failed(smd_result_t code) {
    if (finish(code)) rec_.dump_or_warn(smd_result_string(code));
  }

 private:
  // Closes the records once; true if the flight recorder had the call.
  bool finish(smd_result_t code) {
    if (finished_) return false;
    finished_ = true;
    if (trace_start_us_)
      comm_.ctx().tracer()->collective(comm_.ctx().trace_track(comm_.id()), coll_name(args_.kind),
                                       comm_.last_algorithm(), seq_, args_.count,
                                       datatype_name(args_.datatype), args_.root, trace_start_us_,
                                       smd_result_string(code));
    if (seq_ == FlightRecorder::kNone) return false;
    rec_.end(seq_, code);
    return true;
  }

  Comm &comm_;
  const CollArgs &args_;
  FlightRecorder &rec_;
  uint64_t seq_ = FlightRecorder::kNone;
  int64_t trace_start_us_ = 0;
  bool finished_ = false;
};

}  // namespace smd
