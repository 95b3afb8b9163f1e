// Blocking calls from the one thread that uses a communicator, without a
// locked instruction. Every such instruction (a mutex, a reference count,
// the executor's compare-exchange) waits for the stores before it to
// leave the core, and a tiny collective's last store is a cache line a
// peer is about to read: in a loop of 8-byte calls that wait was most of
// the call. So a communicator that one thread alone has used is biased to
// that thread: its blocking calls find the communicator through a
// thread-local cache and run inline, announcing themselves with a plain
// store (the thread's `inside` slot). The rare other side (a second
// thread, a nonblocking call, destroying the communicator) revokes the
// bias or invalidates the caches, then issues membarrier(2) (a fence on
// every thread of the process) and waits until no thread is inside:
// either the fast caller's checks see the change, or the waiter sees it
// inside. Without membarrier (old kernels, seccomp) nothing is biased.
#pragma once

#include <atomic>
#include <cstdint>

namespace smd {

// One thread's slot, registered on first use, unregistered at its exit.
struct ThreadSlot {
  // The communicator (its executor) a fast call of this thread is in.
  std::atomic<const void *> inside{nullptr};
  // The last handle this thread looked up, what it maps to, and the
  // handle generation then (any destroy moves it on).
  const void *handle = nullptr;
  void *comm = nullptr;
  const void *key = nullptr;  // its executor: what `inside` names
  uint64_t generation = UINT64_MAX;
};

ThreadSlot &this_thread_slot();

// Whether biasing is possible in this process (membarrier registered, and
// SMD_FAST_PATH not 0); decided once.
bool sole_user_enabled();

// Bumped whenever a communicator handle is destroyed: cached lookups of
// every thread are then checked again under the registry's lock.
std::atomic<uint64_t> &handle_generation();

// The slow side: a fence on every thread of the process, then a wait
// until no thread's fast call is inside `key`.
void fence_all_threads();
void wait_until_nobody_inside(const void *key);

}  // namespace smd
