#include "core/api/handles.h"

#include "core/util/error.h"

namespace smd {

Registry<smd_comm> &comm_registry() {
  static auto *r = new Registry<smd_comm>();  // outlives static destructors
  return *r;
}

Registry<smd_request> &request_registry() {
  static auto *r = new Registry<smd_request>();
  return *r;
}

Registry<smd_groups> &groups_registry() {
  static auto *r = new Registry<smd_groups>();
  return *r;
}

std::shared_ptr<Comm> comm_of(const smd_comm_t *handle, uint64_t *generation) {
  if (!handle) fail(SMD_ERR_INVALID_ARGUMENT, "comm is NULL");
  // The reference is copied under the registry's lock: a handle found live
  // stays usable through this call even if another thread destroys it (the
  // destroying thread removes it under that lock before freeing it).
  std::shared_ptr<Comm> impl;
  if (!comm_registry().if_live(handle, [&] {
        impl = handle->impl;
        if (generation) *generation = handle_generation().load();
      }))
    fail(SMD_ERR_INVALID_USAGE, "comm %p is not a live communicator (destroyed, or never created)",
         static_cast<const void *>(handle));
  return impl;
}

CommUse::CommUse(const smd_comm_t *handle, bool blocking) {
  if (!handle) fail(SMD_ERR_INVALID_ARGUMENT, "comm is NULL");
  if (!blocking || !sole_user_enabled()) {
    ref_ = comm_of(handle);
    comm_ = ref_.get();
    return;
  }
  ThreadSlot &t = this_thread_slot();
  if (t.handle == handle) {
    // Announce first, then look (sole_user.h): a destroy or a revocation
    // that this thread's reads miss waits for `inside` to clear. The
    // cached communicator is not touched before the checks pass.
    auto *c = static_cast<Comm *>(t.comm);
    t.inside.store(t.key, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (handle_generation().load(std::memory_order_relaxed) == t.generation &&
        c->executor().biased_to(&t)) {
      slot_ = &t;
      comm_ = c;
      fast_ = true;
      return;
    }
    t.inside.store(nullptr, std::memory_order_release);
  }
  uint64_t generation = 0;
  ref_ = comm_of(handle, &generation);
  comm_ = ref_.get();
  t.handle = handle;
  t.comm = comm_;
  t.key = &comm_->executor();
  t.generation = generation;
}

smd_comm_t *new_comm_handle(std::shared_ptr<Comm> comm) {
  auto *h = new smd_comm{std::move(comm)};
  comm_registry().add(h);
  return h;
}

void release_comm_handle(smd_comm_t *handle) {
  std::shared_ptr<Comm> impl = std::move(handle->impl);
  if (sole_user_enabled()) {
    // Every thread's cached lookup is stale now; a fast call already
    // inside (of another thread) ends before the handle goes.
    handle_generation().fetch_add(1);
    fence_all_threads();
    wait_until_nobody_inside(&impl->executor());
  }
  delete handle;
  impl->executor().drain(Deadline::after_ms(impl->ctx().timeout_ms()));
}

const RankGroups &groups_of(const smd_groups_t *handle) {
  if (!handle) fail(SMD_ERR_INVALID_ARGUMENT, "groups is NULL");
  if (!groups_registry().contains(handle))
    fail(SMD_ERR_INVALID_USAGE, "groups %p is not live (destroyed, or never created)",
         static_cast<const void *>(handle));
  return *handle->impl;
}

}  // namespace smd
