#include "trace.h"

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
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
  std::atomic<bool> on{false};
  std::mutex mu;
  std::string path;  // set once, under mu, before `on`
  uint64_t next_id = 1;
  std::vector<Event> events;
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

void trace_to(const char *path) {
  if (path == nullptr || *path == 0) return;
  Trace &t = trace();
  std::lock_guard<std::mutex> lock(t.mu);
  if (!t.path.empty()) return;
  t.path = path;
  t.on.store(true, std::memory_order_release);
}

bool tracing() { return trace().on.load(std::memory_order_acquire); }

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

bool trace_flush(std::string *path) {
  Trace &t = trace();
  std::lock_guard<std::mutex> lock(t.mu);
  *path = t.path;
  if (t.events.empty()) return true;
  FILE *f = std::fopen(t.path.c_str(), "a");
  bool ok = f != nullptr;
  for (size_t i = 0; ok && i < t.events.size(); ++i) {
    const Event &e = t.events[i];
    int n = e.dst < 0 ? std::fprintf(f, "%" PRId64 " %d R %" PRIu64 "\n", e.ns, e.rank, e.id)
                      : std::fprintf(f, "%" PRId64 " %d S %" PRIu64 " %d %zu\n", e.ns, e.rank, e.id,
                                     e.dst, e.bytes);
    ok = n > 0;
  }
  if (f != nullptr && std::fclose(f) != 0) ok = false;
  t.events.clear();
  return ok;
}

}  // namespace smd_inproc
