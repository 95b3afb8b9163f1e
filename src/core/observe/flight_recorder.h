// The flight recorder: a ring of a communicator's last N collective calls
// (what was asked, which algorithm ran, when, how it ended), written as
// JSON when a collective fails, the communicator is aborted, or the
// process dies of a fatal signal (fatal_signal_dump.h), so that
// `smd-info flight DIR` can name the rank that fell behind and the calls
// ranks disagreed on.
//
// One thread at a time runs a communicator's collectives (its executor),
// but the signal handler and smd_comm_abort may read the ring while it is
// written: every field is a relaxed atomic, and a torn entry in a dump is
// acceptable (its seq field tells a reader which call it belongs to).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

namespace smd {

enum class FlightState : uint8_t { kQueued, kRunning, kDone, kFailed };
const char *flight_state_name(FlightState s);

// What a call asked for; `kind` and `algorithm` must be static strings.
struct FlightCall {
  const char *kind = "";
  int datatype = 0;
  int op = 0;
  uint64_t count = 0;
  int root = 0;
};

// Who wrote a dump: fixed when the communicator is made.
struct FlightIdentity {
  int world_rank = 0;
  int world_size = 1;
  uint32_t comm_id = 0;
  int comm_first_member = 0;  // with comm_id, names a communicator job-wide
  int comm_rank = 0;
  int comm_size = 1;
};

class FlightRecorder {
 public:
  static constexpr uint64_t kNone = ~0ull;

  // capacity 0: records nothing (every call is one branch). dump_dir
  // empty: keeps the ring (smd-info can still not see it) but writes no
  // file.
  FlightRecorder(size_t capacity, const std::string &dump_dir, const FlightIdentity &who);
  ~FlightRecorder();
  FlightRecorder(const FlightRecorder &) = delete;
  FlightRecorder &operator=(const FlightRecorder &) = delete;

  bool on() const { return capacity_ != 0; }

  // A nonblocking call entered the communicator's queue; its begin()
  // will reuse this entry (calls run in issue order).
  void queued(const FlightCall &call);
  // The call starts running on this thread; returns its sequence number
  // (calls of this communicator, from 0), kNone when off.
  uint64_t begin(const FlightCall &call, const char *algorithm);
  // Names the algorithm of the call running now.
  void set_algorithm(const char *algorithm) {
    uint64_t seq = current_.load(std::memory_order_relaxed);
    if (seq != kNone) slot(seq)->algorithm.store(algorithm, std::memory_order_relaxed);
  }
  // result: an smd_result_t (0 = done).
  void end(uint64_t seq, int result);

  // Writes the dump file now (no-op without a dump directory): a new file
  // under an unguessable name, renamed over dump_path(), so that a link or
  // file someone planted there is replaced, never written through.
  // Allocates nothing and calls only open(2)/write(2)/close(2)/rename(2)/
  // unlink(2): safe in a signal handler. reason: "timeout", "abort",
  // "signal 11", ... Returns 0, or the errno of the step that failed.
  int dump(const char *reason) const;
  // dump(), with a warning naming the file when it cannot be written (not
  // in a signal handler).
  void dump_or_warn(const char *reason) const;
  // The dump as text, for tests and logs.
  std::string to_json(const char *reason) const;
  const char *dump_path() const { return path_; }

 private:
  struct Entry {
    std::atomic<uint64_t> seq{kNone};
    std::atomic<const char *> kind{""};
    std::atomic<const char *> algorithm{""};
    std::atomic<int32_t> datatype{0}, op{0}, root{0}, result{0};
    std::atomic<uint64_t> count{0};
    std::atomic<int64_t> queued_ns{0}, start_ns{0}, end_ns{0};
    std::atomic<uint8_t> state{0};
  };
  Entry *slot(uint64_t seq) const { return &ring_[seq % capacity_]; }
  uint64_t claim(const FlightCall &call, FlightState state);
  // Writes the JSON through `sink` (a file descriptor or a string).
  void write_json(class JsonSink &out, const char *reason) const;

  size_t capacity_;
  std::unique_ptr<Entry[]> ring_;
  std::atomic<uint64_t> next_{0};
  std::atomic<bool> ever_queued_{false};  // a queued call claimed an entry
  std::atomic<uint64_t> current_{kNone};
  // Sequence numbers of queued calls not yet begun, oldest first.
  std::mutex queue_mu_;
  std::deque<uint64_t> queue_;
  std::atomic<size_t> queued_count_{0};
  FlightIdentity who_;
  char path_[512] = {0};
  char temp_path_[540] = {0};  // path_ + ".tmp-" + 16 random hex digits
  int registered_slot_ = -1;
};

// SMD_FLIGHT_RECORDER and SMD_DUMP_DIR, read once per process. A dump
// directory that does not exist is created (mode 0700, parents too); one
// that cannot be made or is not a directory is warned about once and ""
// is returned (no dumps).
size_t flight_recorder_capacity();
const std::string &flight_dump_dir();

}  // namespace smd
