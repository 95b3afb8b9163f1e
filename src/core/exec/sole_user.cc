#include "core/exec/sole_user.h"

#include <linux/membarrier.h>
#include <sched.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "core/util/params.h"

namespace smd {

namespace {

// Never destroyed: threads may exit (and unregister) after static
// destructors ran.
struct SlotList {
  std::mutex mu;
  std::vector<ThreadSlot *> slots;
};
SlotList &slot_list() {
  static SlotList *list = new SlotList();
  return *list;
}

struct SlotOwner {
  ThreadSlot slot;
  SlotOwner() {
    SlotList &l = slot_list();
    std::lock_guard<std::mutex> lock(l.mu);
    l.slots.push_back(&slot);
  }
  ~SlotOwner() {
    SlotList &l = slot_list();
    std::lock_guard<std::mutex> lock(l.mu);
    l.slots.erase(std::remove(l.slots.begin(), l.slots.end(), &slot), l.slots.end());
  }
};

long membarrier(int cmd) { return syscall(__NR_membarrier, cmd, 0, 0); }

}  // namespace

ThreadSlot &this_thread_slot() {
  thread_local SlotOwner owner;
  return owner.slot;
}

bool sole_user_enabled() {
  static const bool enabled = [] {
    const std::string off = param_string("SMD_FAST_PATH");
    for (const char *word : {"0", "off", "no", "false"})
      if (strcasecmp(off.c_str(), word) == 0) return false;
    long cmds = membarrier(MEMBARRIER_CMD_QUERY);
    if (cmds < 0 || (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
    return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
  }();
  return enabled;
}

std::atomic<uint64_t> &handle_generation() {
  static std::atomic<uint64_t> generation{0};
  return generation;
}

void fence_all_threads() {
  // Registered before any bias was granted (sole_user_enabled): it cannot
  // fail then. Without it nothing was biased, and this fence is enough.
  if (!sole_user_enabled() || membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0)
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

void wait_until_nobody_inside(const void *key) {
  SlotList &l = slot_list();
  ThreadSlot *me = &this_thread_slot();
  for (;;) {
    bool inside = false;
    {
      std::lock_guard<std::mutex> lock(l.mu);
      for (ThreadSlot *s : l.slots)
        if (s != me && s->inside.load(std::memory_order_acquire) == key) inside = true;
    }
    if (!inside) return;
    sched_yield();
  }
}

}  // namespace smd
