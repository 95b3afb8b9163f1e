// What the opaque handles of smd.h are, and the registries that let every
// entry point tell a live handle from a destroyed or bogus one.
#pragma once

#include <smd.h>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/comm/communicator.h"
#include "core/comm/p2p_matcher.h"
#include "core/exec/executor.h"
#include "core/exec/sole_user.h"
#include "core/groups/groups.h"

struct smd_comm {
  std::shared_ptr<smd::Comm> impl;
  // Set for the communicators of an smd_groups_t: they go with it.
  const smd_groups *owner = nullptr;
};

struct smd_groups {
  std::unique_ptr<smd::RankGroups> impl;
  std::array<smd_comm_t *, SMD_GROUP_KIND_COUNT> comms{};
};

struct smd_request {
  std::shared_ptr<smd::Comm> comm;  // keeps the communicator's insides alive
  std::shared_ptr<smd::Task> task;  // collectives: run by the executor
  smd::P2PReq p2p;                  // point-to-point: driven by test/wait
  bool is_p2p = false;
  // A user send's envelope and its transfer; a user receive's match.
  std::unique_ptr<smd::P2PMatcher::Envelope> envelope;
  smd::P2PReq envelope_req;
  std::shared_ptr<smd::P2PMatcher::Recv> user_recv;
  // Device memory on the NULL stream (staged_p2p.h): the payload's host
  // copy, and a receive's device buffer it lands in once finished.
  std::vector<uint8_t> staged;
  void *staged_into = nullptr;
  size_t elem_size = 1;
  size_t count = 0;  // elements moved, once finished
  bool finished = false;
  smd_result_t result = SMD_SUCCESS;
  std::string error;
  // For the caller's message: what the operation does ("receive from rank
  // 1 (tag 9)", "allreduce"), and a receive's buffer ("16-byte buffer
  // (4 x float32)"; empty otherwise).
  std::string op, buffer;
  // Queued in a group (group_calls.h): it completes at that group's
  // smd_group_end, on the group's thread; another thread's wait or free
  // gets SMD_TIMEOUT's deadline instead of waiting for ever.
  bool from_group = false;
  std::mutex mu;
};

namespace smd {

template <class T>
class Registry {
 public:
  void add(T *h) {
    std::lock_guard<std::mutex> lock(mu_);
    live_.insert(h);
  }
  bool remove(T *h) {
    std::lock_guard<std::mutex> lock(mu_);
    return live_.erase(h) > 0;
  }
  bool contains(const T *h) {
    std::lock_guard<std::mutex> lock(mu_);
    return live_.count(const_cast<T *>(h)) > 0;
  }
  // Runs fn() under the lock if h is live, so that a remove() on another
  // thread cannot free h while fn reads it; false if h is not live.
  template <class F>
  bool if_live(const T *h, F &&fn) {
    std::lock_guard<std::mutex> lock(mu_);
    if (live_.count(const_cast<T *>(h)) == 0) return false;
    fn();
    return true;
  }

 private:
  std::mutex mu_;
  std::unordered_set<T *> live_;
};

Registry<smd_comm> &comm_registry();
Registry<smd_request> &request_registry();
Registry<smd_groups> &groups_registry();

// The communicator behind a handle; throws SMD_ERR_INVALID_USAGE for a
// handle that is not live. `generation`: handle_generation() as read
// under the registry's lock (sole_user.h).
std::shared_ptr<Comm> comm_of(const smd_comm_t *handle, uint64_t *generation = nullptr);

// The communicator of one API call, for the length of that call. A
// blocking call of the thread the communicator is biased to (sole_user.h)
// finds it in the thread's cache with no lock or reference count, and
// runs inline (fast()); every other call holds a reference.
class CommUse {
 public:
  CommUse(const smd_comm_t *handle, bool blocking);
  ~CommUse() {
    if (fast_) slot_->inside.store(nullptr, std::memory_order_release);
  }
  CommUse(const CommUse &) = delete;
  CommUse &operator=(const CommUse &) = delete;
  Comm *operator->() const { return comm_; }
  Comm &operator*() const { return *comm_; }
  bool fast() const { return fast_; }
  // A reference, for what outlives the call (requests, group queues).
  std::shared_ptr<Comm> shared() const { return ref_ ? ref_ : comm_->shared_from_this(); }

 private:
  ThreadSlot *slot_ = nullptr;
  Comm *comm_ = nullptr;
  bool fast_ = false;
  std::shared_ptr<Comm> ref_;
};

// A new handle for a communicator (registered).
smd_comm_t *new_comm_handle(std::shared_ptr<Comm> comm);

// Frees a handle already taken out of the registry; the communicator's
// queued operations finish first (requests still hold its insides).
void release_comm_handle(smd_comm_t *handle);

// The status of a finished (or failed) request, into a checked *out.
void request_status(const smd_request &r, smd_status_t *out);

// The groups behind a handle; throws SMD_ERR_INVALID_USAGE for a handle
// that is not live.
const RankGroups &groups_of(const smd_groups_t *handle);

}  // namespace smd
