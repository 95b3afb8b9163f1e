#include "trace.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace smd_inproc {
namespace {

struct Event {
  int64_t ns;
  int32_t rank, dst;  // dst < 0: a receive
  uint64_t id;
  size_t bytes;
};

struct Trace {
  std::string path;
  std::mutex mu;
  uint64_t next_id = 1;
  std::vector<Event> events;
  Trace() {
    const char *p = std::getenv("SMD_INPROC_TRACE");
    if (p) path = p;
  }
};

Trace &trace() {
  static Trace *t = new Trace();  // never destroyed, as the registry
  return *t;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

bool tracing() {
  static const bool on = !trace().path.empty();
  return on;
}

uint64_t trace_send(int32_t rank, int32_t dst, size_t bytes) {
  Trace &t = trace();
  std::lock_guard<std::mutex> lock(t.mu);
  uint64_t id = t.next_id++;
  t.events.push_back({now_ns(), rank, dst, id, bytes});
  return id;
}

void trace_receive(int32_t rank, uint64_t id) {
  Trace &t = trace();
  std::lock_guard<std::mutex> lock(t.mu);
  t.events.push_back({now_ns(), rank, -1, id, 0});
}

void trace_flush() {
  Trace &t = trace();
  std::lock_guard<std::mutex> lock(t.mu);
  if (t.events.empty()) return;
  FILE *f = std::fopen(t.path.c_str(), "a");
  if (f == nullptr) {
    std::fprintf(stderr, "inproc: cannot append to SMD_INPROC_TRACE %s\n", t.path.c_str());
  } else {
    for (const Event &e : t.events) {
      if (e.dst < 0)
        std::fprintf(f, "%" PRId64 " %d R %" PRIu64 "\n", e.ns, e.rank, e.id);
      else
        std::fprintf(f, "%" PRId64 " %d S %" PRIu64 " %d %zu\n", e.ns, e.rank, e.id, e.dst,
                     e.bytes);
    }
    std::fclose(f);
  }
  t.events.clear();
}

}  // namespace smd_inproc
