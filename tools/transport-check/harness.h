// What a conformance test sees: the plugin table, this rank's context and
// endpoints, and helpers that turn every surprise into a failure message
// that names the call, the peer and the plugin's own error text. Every
// wait has a deadline and gives up when another rank has failed the same
// test, so one failure never turns into a hang.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "arena.h"
#include "smd_transport.h"

namespace tcheck {

struct TestFailure {
  std::string message;
};
struct TestSkip {
  std::string reason;
};
// Another rank failed this test first.
struct TestAborted {
  int rank;
};

struct Completion {
  smd_transport_status_t status = SMD_TRANSPORT_OK;
  size_t size = 0;
  std::string error;  // the plugin's set_error text when status != OK
};

class Env {
 public:
  Env(const smd_transport_v1_t &table, Arena *arena, int rank, int nranks, bool verbose);

  const smd_transport_v1_t &t;
  Arena *const arena;
  const int rank;
  const int nranks;
  const bool verbose;

  // Set up by connect_all.
  void *ctx = nullptr;
  std::vector<void *> ep;  // ep[peer]; nullptr for this rank
  bool connected = false;

  // The host record handed to init; its callbacks land here.
  smd_transport_host_t host{};
  std::string last_error;

  void begin(int test_index, double deadline);
  // Cancels what the test left outstanding; waits for the other ranks.
  void end();

  int test_index() const { return test_; }
  bool has(uint64_t cap) const { return (t.caps & cap) != 0; }
  int next() const { return (rank + 1) % nranks; }
  int prev() const { return (rank + nranks - 1) % nranks; }
  // A tag unique to this test: (test + 1) in bits 36..43, `sub` below.
  uint64_t tag(uint64_t sub) const;

  void *isend(int peer, const void *buf, size_t n, uint64_t tag, void *mr = nullptr);
  void *irecv(int peer, void *buf, size_t n, uint64_t tag, void *mr = nullptr);
  // One test() call; true when the request finished (it is then released).
  bool poll(void *req, Completion *c, const char *what);
  Completion wait(void *req, const char *what);
  Completion wait_within(void *req, double seconds, const char *what);
  // Wait and require status OK.
  Completion expect_ok(void *req, const char *what);
  void cancel(void *req);
  // Drop a request from the harness's books without cancelling it.
  void forget(void *req);
  // A registration of buf when the plugin requires one, else nullptr.
  void *register_if_required(const void *buf, size_t n) { return auto_register(buf, n); }

  // Between test() calls: progress, yield the core when oversubscribed,
  // give up at the deadline or when another rank failed.
  void idle();
  void barrier();

  void publish(const void *data, size_t n);
  std::vector<unsigned char> fetch(int from) const;

  void note(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
  [[noreturn]] void fail(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
  [[noreturn]] void skip(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
  // Fails unless s is OK, naming `what` and the plugin's error.
  void check(smd_transport_status_t s, const char *what);
  void check_pattern(const void *buf, size_t n, uint64_t seed, const char *what, size_t offset = 0);
  double deadline() const { return deadline_; }
  const std::string &notes() const { return notes_; }

 private:
  void end_barrier();
  void *start(bool send, int peer, void *buf, size_t n, uint64_t tag, void *mr);
  void *auto_register(const void *buf, size_t n);
  void release(void *req);
  std::unordered_set<void *> outstanding_;
  // Plugins with REGISTRATION_REQUIRED get every buffer registered for
  // the life of its request.
  std::unordered_map<void *, void *> auto_mr_;
  int test_ = -1;
  int barriers_ = 0;
  double deadline_ = 0;
  unsigned spins_ = 0;
  bool oversubscribed_ = false;
  std::string notes_;
};

// "message of 4096 B from rank 1" style helpers for messages.
std::string describe(smd_transport_status_t s, const std::string &error);

}  // namespace tcheck
