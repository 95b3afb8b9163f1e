#include "harness.h"

#include <sched.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "pattern.h"
#include "plugin_table.h"

namespace tcheck {

static std::string vformat(const char *fmt, va_list args) {
  char text[kMessageSize];
  vsnprintf(text, sizeof text, fmt, args);
  return text;
}

// Declares `text`: the arguments after `fmt` of the enclosing printf-like
// function, formatted (va_start needs that function's own frame).
#define TCHECK_FORMAT(text, fmt) \
  std::string text;              \
  do {                           \
    va_list args;                \
    va_start(args, fmt);         \
    text = vformat(fmt, args);   \
    va_end(args);                \
  } while (0)

std::string describe(smd_transport_status_t s, const std::string &error) {
  std::string d = status_name(s);
  if (!error.empty()) d += " (" + error + ")";
  return d;
}

Env::Env(const smd_transport_v1_t &table, Arena *a, int r, int n, bool v)
    : t(table), arena(a), rank(r), nranks(n), verbose(v) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  oversubscribed_ = cpus > 0 && n > cpus;
}

void Env::begin(int test_index, double deadline) {
  test_ = test_index;
  barriers_ = 0;
  deadline_ = deadline;
  notes_.clear();
  last_error.clear();
}

void Env::end() {
  for (void *req : outstanding_) t.cancel(ctx, req);
  outstanding_.clear();
  for (auto &[req, mr] : auto_mr_) t.mem_deregister(ctx, mr);
  auto_mr_.clear();
  end_barrier();
}

void *Env::auto_register(const void *buf, size_t n) {
  if (!has(SMD_TRANSPORT_CAP_REGISTRATION_REQUIRED) || n == 0) return nullptr;
  void *mr = nullptr;
  last_error.clear();
  smd_transport_status_t s = t.mem_register(ctx, const_cast<void *>(buf), n, 0, &mr);
  if (s != SMD_TRANSPORT_OK)
    fail("mem_register of a %zu-byte buffer returned %s", n, describe(s, last_error).c_str());
  return mr;
}

// The request is finished or cancelled: drop what the harness kept for it.
void Env::release(void *req) {
  outstanding_.erase(req);
  auto it = auto_mr_.find(req);
  if (it == auto_mr_.end()) return;
  t.mem_deregister(ctx, it->second);
  auto_mr_.erase(it);
}

void Env::forget(void *req) {
  outstanding_.erase(req);
  auto_mr_.erase(req);
}

uint64_t Env::tag(uint64_t sub) const {
  return (uint64_t(test_ + 1) << 36) | (sub & ((uint64_t(1) << 36) - 1));
}

void *Env::isend(int peer, const void *buf, size_t n, uint64_t tg, void *mr) {
  return start(true, peer, const_cast<void *>(buf), n, tg, mr);
}

void *Env::irecv(int peer, void *buf, size_t n, uint64_t tg, void *mr) {
  return start(false, peer, buf, n, tg, mr);
}

void *Env::start(bool send, int peer, void *buf, size_t n, uint64_t tg, void *mr) {
  void *req = nullptr;
  void *own = mr == nullptr ? auto_register(buf, n) : nullptr;
  if (own != nullptr) mr = own;
  last_error.clear();
  void *endpoint = ep[size_t(peer)];
  smd_transport_status_t s = send ? t.isend(ctx, endpoint, buf, n, mr, tg, &req)
                                  : t.irecv(ctx, endpoint, buf, n, mr, tg, &req);
  if (s != SMD_TRANSPORT_OK && own != nullptr) t.mem_deregister(ctx, own);
  const char *what = send ? "isend" : "irecv";
  const char *dir = send ? "to" : "from";
  if (s != SMD_TRANSPORT_OK)
    fail("%s of %zu B %s rank %d returned %s", what, n, dir, peer, describe(s, last_error).c_str());
  if (req == nullptr) fail("%s of %zu B %s rank %d returned no request", what, n, dir, peer);
  outstanding_.insert(req);
  if (own != nullptr) auto_mr_[req] = own;
  return req;
}

bool Env::poll(void *req, Completion *c, const char *what) {
  int done = 0;
  size_t size = 0;
  last_error.clear();
  smd_transport_status_t s = t.test(ctx, req, &done, &size);
  if (!done) {
    if (s != SMD_TRANSPORT_OK && s != SMD_TRANSPORT_IN_PROGRESS)
      fail("test() on %s returned %s without finishing it", what, describe(s, last_error).c_str());
    return false;
  }
  release(req);
  c->status = s;
  c->size = size;
  c->error = s == SMD_TRANSPORT_OK ? std::string() : last_error;
  return true;
}

void Env::idle() {
  if (ctx != nullptr) t.progress(ctx);
  if (oversubscribed_ || (++spins_ & 31) == 0) sched_yield();
  if ((spins_ & 63) == 0 || oversubscribed_) {
    int failed = arena->failed_by[test_].load(std::memory_order_relaxed);
    if (failed != 0 && failed - 1 != rank) throw TestAborted{failed - 1};
    if (now_seconds() > deadline_) fail("gave up: the test's time ran out");
  }
}

Completion Env::wait(void *req, const char *what) {
  return wait_within(req, deadline_ - now_seconds(), what);
}

Completion Env::wait_within(void *req, double seconds, const char *what) {
  double until = now_seconds() + seconds;
  Completion c;
  for (unsigned i = 0;; ++i) {
    if (poll(req, &c, what)) return c;
    if ((i & 63) == 63 && now_seconds() > until)
      fail("%s did not complete within %.1f s", what, seconds);
    idle();
  }
}

Completion Env::expect_ok(void *req, const char *what) {
  Completion c = wait(req, what);
  if (c.status != SMD_TRANSPORT_OK)
    fail("%s completed with %s", what, describe(c.status, c.error).c_str());
  return c;
}

void Env::cancel(void *req) {
  last_error.clear();
  smd_transport_status_t s = t.cancel(ctx, req);
  release(req);
  if (s != SMD_TRANSPORT_OK) fail("cancel returned %s", describe(s, last_error).c_str());
}

void Env::barrier() {
  if (barriers_ >= kMaxBarriers) fail("test uses more than %d barriers", kMaxBarriers);
  std::atomic<int> &b = arena->barrier[test_][barriers_++];
  b.fetch_add(1);
  while (b.load() < arena->live.load()) idle();
}

// Every rank reaches it whatever happened in the test; the supervisor
// deals with a rank that never comes.
void Env::end_barrier() {
  std::atomic<int> &b = arena->end_barrier[test_];
  b.fetch_add(1);
  while (b.load() < arena->live.load()) {
    if (ctx != nullptr) t.progress(ctx);
    sched_yield();
  }
}

void Env::publish(const void *data, size_t n) {
  if (n > kMaxBlob) fail("blob of %zu B is larger than the arena's %zu", n, kMaxBlob);
  memcpy(arena->blob[rank], data, n);
  arena->blob_len[rank] = uint32_t(n);
}

std::vector<unsigned char> Env::fetch(int from) const {
  const unsigned char *p = arena->blob[from];
  return std::vector<unsigned char>(p, p + arena->blob_len[from]);
}

void Env::note(const char *fmt, ...) {
  TCHECK_FORMAT(text, fmt);
  if (!notes_.empty()) notes_ += "; ";
  notes_ += text;
}

void Env::fail(const char *fmt, ...) {
  TCHECK_FORMAT(text, fmt);
  throw TestFailure{text};
}

void Env::skip(const char *fmt, ...) {
  TCHECK_FORMAT(text, fmt);
  throw TestSkip{text};
}

void Env::check(smd_transport_status_t s, const char *what) {
  if (s != SMD_TRANSPORT_OK) fail("%s returned %s", what, describe(s, last_error).c_str());
}

void Env::check_pattern(const void *buf, size_t n, uint64_t seed, const char *what, size_t offset) {
  unsigned got = 0, want = 0;
  long at = pattern_check(buf, n, seed, offset, &got, &want);
  if (at >= 0) fail("%s: byte %ld of %zu is 0x%02x, expected 0x%02x", what, at, n, got, want);
}

}  // namespace tcheck
