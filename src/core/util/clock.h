// Monotonic time and deadlines.
#pragma once

#include <cstdint>
#include <ctime>

namespace smd {

inline int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

inline int64_t now_us() { return now_ns() / 1000; }
inline int64_t now_ms() { return now_ns() / 1000000; }

// A point in time after which a wait gives up. Default: never.
class Deadline {
 public:
  Deadline() = default;
  static Deadline after_ms(int64_t ms) {
    Deadline d;
    d.at_ns_ = ms < 0 ? INT64_MAX : now_ns() + ms * 1000000;
    return d;
  }
  static Deadline never() { return Deadline(); }
  bool expired() const { return at_ns_ != INT64_MAX && now_ns() >= at_ns_; }
  int64_t remaining_ms() const {
    if (at_ns_ == INT64_MAX) return INT64_MAX;
    int64_t r = (at_ns_ - now_ns()) / 1000000;
    return r < 0 ? 0 : r;
  }
  int64_t at_ns() const { return at_ns_; }
  Deadline min(const Deadline &o) const { return at_ns_ < o.at_ns_ ? *this : o; }

 private:
  int64_t at_ns_ = INT64_MAX;
};

}  // namespace smd
