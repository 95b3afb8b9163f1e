#include "core/observe/flight_recorder.h"

#include <smd.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "core/observe/fatal_signal_dump.h"
#include "core/util/dtype.h"
#include "core/util/error.h"
#include "core/util/log.h"
#include "core/util/params.h"
#include "core/util/private_dir.h"
#include "core/util/safe_file.h"

namespace smd {

// Text out without allocating: into a fixed buffer flushed to a file
// descriptor with write(2) (signal handlers), or into a string.
class JsonSink {
 public:
  explicit JsonSink(int fd) : fd_(fd) {}
  explicit JsonSink(std::string *s) : str_(s) {}
  ~JsonSink() { flush(); }

  JsonSink &text(const char *s) {
    while (*s) put(*s++);
    return *this;
  }
  // A JSON string; our strings are static names, so escaping " and \ and
  // dropping control characters is all it takes.
  JsonSink &quoted(const char *s) {
    put('"');
    for (; s && *s; ++s) {
      if (*s == '"' || *s == '\\') put('\\');
      if (static_cast<unsigned char>(*s) >= 0x20) put(*s);
    }
    put('"');
    return *this;
  }
  JsonSink &num(int64_t v) {
    char digits[24];
    int n = 0;
    uint64_t u = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    do {
      digits[n++] = static_cast<char>('0' + u % 10);
      u /= 10;
    } while (u);
    if (v < 0) put('-');
    while (n) put(digits[--n]);
    return *this;
  }
  JsonSink &key(const char *k) {
    quoted(k);
    put(':');
    return *this;
  }
  void flush() {
    if (fd_ < 0 || used_ == 0) return;
    size_t off = 0;
    while (off < used_) {
      ssize_t w = ::write(fd_, buf_ + off, used_ - off);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) break;
      off += static_cast<size_t>(w);
    }
    used_ = 0;
  }

 private:
  void put(char c) {
    if (str_) {
      str_->push_back(c);
      return;
    }
    if (used_ == sizeof(buf_)) flush();
    buf_[used_++] = c;
  }
  int fd_ = -1;
  std::string *str_ = nullptr;
  char buf_[1024];
  size_t used_ = 0;
};

namespace {
// The recorder's clock: the kernel's tick-granular monotonic time, far
// cheaper to read twice per call than the precise clock on virtual
// machines where a precise read can cost a system call. Millisecond resolution is enough to see
// which call hung and since when; SMD_TRACE times calls precisely.
int64_t coarse_now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
}  // namespace

const char *flight_state_name(FlightState s) {
  switch (s) {
    case FlightState::kQueued: return "queued";
    case FlightState::kRunning: return "running";
    case FlightState::kDone: return "done";
    case FlightState::kFailed: return "failed";
  }
  return "unknown";
}

size_t flight_recorder_capacity() {
  static const size_t capacity = [] {
    int64_t n = param_int("SMD_FLIGHT_RECORDER");
    if (n < 0) n = 0;
    if (n > (1 << 20)) n = 1 << 20;
    return static_cast<size_t>(n);
  }();
  return capacity;
}

const std::string &flight_dump_dir() {
  static const std::string dir = [] {
    std::string d = param_string("SMD_DUMP_DIR");
    if (d.empty()) return d;
    struct stat st {};
    std::string problem;
    if (stat(d.c_str(), &st) != 0) {
      problem =
          errno == ENOENT ? make_private_dirs(d) : format("%s: %s", d.c_str(), strerror(errno));
      if (problem.empty()) SMD_INFO("comm", "SMD_DUMP_DIR: created %s (mode 0700)", d.c_str());
    } else if (!S_ISDIR(st.st_mode)) {
      problem = format("%s is not a directory", d.c_str());
    }
    if (problem.empty()) return d;
    SMD_WARN("comm", "SMD_DUMP_DIR: %s; no flight recorder dumps will be written", problem.c_str());
    return std::string();
  }();
  return dir;
}

FlightRecorder::FlightRecorder(size_t capacity, const std::string &dump_dir,
                               const FlightIdentity &who)
    : capacity_(capacity), who_(who) {
  if (!capacity_) return;
  ring_.reset(new Entry[capacity_]);
  if (dump_dir.empty()) return;
  int n = snprintf(path_, sizeof(path_), "%s/smd-flight.rank%d.comm%u-%d.json", dump_dir.c_str(),
                   who.world_rank, who.comm_id, who.comm_first_member);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof(path_)) {
    SMD_WARN("comm", "SMD_DUMP_DIR is too long for a file name; no flight recorder dumps");
    path_[0] = 0;
    return;
  }
  std::string temp = unguessable_temp_name(path_);
  if (temp.size() >= sizeof(temp_path_)) {
    SMD_WARN("comm", "SMD_DUMP_DIR is too long for a file name; no flight recorder dumps");
    path_[0] = 0;
    return;
  }
  memcpy(temp_path_, temp.c_str(), temp.size() + 1);
  registered_slot_ = dump_on_fatal_signal(this);
}

FlightRecorder::~FlightRecorder() {
  if (registered_slot_ >= 0) forget_on_fatal_signal(registered_slot_);
}

uint64_t FlightRecorder::claim(const FlightCall &call, FlightState state) {
  // Calls run one at a time; only a queued call's entry (another thread's)
  // can be claimed beside a running one. Until the first such entry the
  // running thread is the only writer: a plain increment, not a locked one
  // (which would wait for the last call's stores to leave the core).
  uint64_t seq;
  if (ever_queued_.load(std::memory_order_relaxed)) {
    seq = next_.fetch_add(1, std::memory_order_relaxed);
  } else {
    seq = next_.load(std::memory_order_relaxed);
    next_.store(seq + 1, std::memory_order_relaxed);
  }
  Entry *e = slot(seq);
  constexpr auto r = std::memory_order_relaxed;
  e->seq.store(kNone, r);  // a reader meanwhile sees no entry rather than a mix
  e->kind.store(call.kind, r);
  e->algorithm.store("", r);
  e->datatype.store(call.datatype, r);
  e->op.store(call.op, r);
  e->root.store(call.root, r);
  e->count.store(call.count, r);
  e->result.store(0, r);
  int64_t t = coarse_now_ns();
  e->queued_ns.store(state == FlightState::kQueued ? t : 0, r);
  e->start_ns.store(state == FlightState::kQueued ? 0 : t, r);
  e->end_ns.store(0, r);
  e->state.store(static_cast<uint8_t>(state), r);
  e->seq.store(seq, std::memory_order_release);
  return seq;
}

void FlightRecorder::queued(const FlightCall &call) {
  if (!capacity_) return;
  // Set before this thread's first claim; the executor revoked any
  // thread's bias first (launch), so no call runs now on the communicator
  // unless it is unbiased and running inline: then, once per communicator,
  // two entries may share a number (a diagnostic slip, never a fault).
  ever_queued_.store(true, std::memory_order_seq_cst);
  std::lock_guard<std::mutex> lock(queue_mu_);
  queue_.push_back(claim(call, FlightState::kQueued));
  queued_count_.fetch_add(1, std::memory_order_release);
}

uint64_t FlightRecorder::begin(const FlightCall &call, const char *algorithm) {
  if (!capacity_) return kNone;
  if (queued_count_.load(std::memory_order_acquire) != 0) {
    uint64_t seq = kNone;
    {
      std::lock_guard<std::mutex> lock(queue_mu_);
      if (!queue_.empty()) {
        seq = queue_.front();
        queue_.pop_front();
        queued_count_.fetch_sub(1, std::memory_order_relaxed);
      }
    }
    // The oldest queued call is the one the executor runs now, unless this
    // is a call made inside another (communicator creation) or the ring
    // wrapped around: then it gets an entry of its own.
    Entry *e = seq == kNone ? nullptr : slot(seq);
    if (e && e->seq.load(std::memory_order_relaxed) == seq && e->kind.load() == call.kind) {
      e->algorithm.store(algorithm, std::memory_order_relaxed);
      e->start_ns.store(coarse_now_ns(), std::memory_order_relaxed);
      e->state.store(static_cast<uint8_t>(FlightState::kRunning), std::memory_order_relaxed);
      current_.store(seq, std::memory_order_relaxed);
      return seq;
    }
  }
  uint64_t seq = claim(call, FlightState::kRunning);
  slot(seq)->algorithm.store(algorithm, std::memory_order_relaxed);
  current_.store(seq, std::memory_order_relaxed);
  return seq;
}

void FlightRecorder::end(uint64_t seq, int result) {
  if (seq == kNone) return;
  current_.store(kNone, std::memory_order_relaxed);
  Entry *e = slot(seq);
  if (e->seq.load(std::memory_order_relaxed) != seq) return;  // overwritten after a wrap
  e->end_ns.store(coarse_now_ns(), std::memory_order_relaxed);
  e->result.store(result, std::memory_order_relaxed);
  e->state.store(static_cast<uint8_t>(result == 0 ? FlightState::kDone : FlightState::kFailed),
                 std::memory_order_relaxed);
}

void FlightRecorder::write_json(JsonSink &out, const char *reason) const {
  constexpr auto r = std::memory_order_relaxed;
  uint64_t next = next_.load(std::memory_order_acquire);
  out.text("{").key("smd_flight_recorder").num(1);
  out.text(",").key("reason").quoted(reason);
  out.text(",").key("pid").num(getpid());
  out.text(",").key("world_rank").num(who_.world_rank);
  out.text(",").key("world_size").num(who_.world_size);
  out.text(",").key("comm").num(who_.comm_id);
  out.text(",").key("comm_first_member").num(who_.comm_first_member);
  out.text(",").key("comm_rank").num(who_.comm_rank);
  out.text(",").key("comm_size").num(who_.comm_size);
  out.text(",").key("capacity").num(static_cast<int64_t>(capacity_));
  out.text(",").key("calls").num(static_cast<int64_t>(next));
  out.text(",").key("now_ns").num(coarse_now_ns());
  out.text(",\n").key("entries").text("[");
  uint64_t first = next > capacity_ ? next - capacity_ : 0;
  bool any = false;
  for (uint64_t seq = first; capacity_ && seq < next; ++seq) {
    const Entry &e = *slot(seq);
    if (e.seq.load(std::memory_order_acquire) != seq) continue;
    out.text(any ? ",\n " : "\n ");
    any = true;
    auto state = static_cast<FlightState>(e.state.load(r));
    out.text("{").key("seq").num(static_cast<int64_t>(seq));
    out.text(",").key("kind").quoted(e.kind.load(r));
    out.text(",")
        .key("datatype")
        .quoted(datatype_name(static_cast<smd_datatype_t>(e.datatype.load(r))));
    out.text(",").key("op").quoted(op_name(static_cast<smd_op_t>(e.op.load(r))));
    out.text(",").key("count").num(static_cast<int64_t>(e.count.load(r)));
    out.text(",").key("root").num(e.root.load(r));
    out.text(",").key("algorithm").quoted(e.algorithm.load(r));
    out.text(",").key("state").quoted(flight_state_name(state));
    out.text(",").key("queued_ns").num(e.queued_ns.load(r));
    out.text(",").key("start_ns").num(e.start_ns.load(r));
    out.text(",").key("end_ns").num(e.end_ns.load(r));
    out.text(",").key("result").quoted(
        smd_result_string(static_cast<smd_result_t>(e.result.load(r))));
    out.text("}");
  }
  out.text(any ? "\n]}\n" : "]}\n");
}

int FlightRecorder::dump(const char *reason) const {
  if (!capacity_ || !path_[0]) return 0;
  int fd = create_new_file(temp_path_, 0644);
  if (fd < 0 && errno == EEXIST) {
    // A dump this process was writing when a signal came (the name is
    // unguessable, so ours): the signal's dump takes its place.
    ::unlink(temp_path_);
    fd = create_new_file(temp_path_, 0644);
  }
  if (fd < 0) return errno;
  {
    JsonSink out(fd);
    write_json(out, reason);
  }
  ::close(fd);
  return move_into_place(temp_path_, path_) == 0 ? 0 : errno;
}

void FlightRecorder::dump_or_warn(const char *reason) const {
  if (int err = dump(reason))
    SMD_WARN("comm", "cannot write the flight recorder dump %s: %s (through %s)", path_,
             strerror(err), temp_path_);
}

std::string FlightRecorder::to_json(const char *reason) const {
  std::string s;
  JsonSink out(&s);
  write_json(out, reason);
  return s;
}

}  // namespace smd
