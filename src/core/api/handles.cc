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

std::shared_ptr<Comm> comm_of(const smd_comm_t *handle) {
  if (!handle) fail(SMD_ERR_INVALID_ARGUMENT, "comm is NULL");
  // The reference is copied under the registry's lock: a handle found live
  // stays usable through this call even if another thread destroys it (the
  // destroying thread removes it under that lock before freeing it).
  std::shared_ptr<Comm> impl;
  if (!comm_registry().if_live(handle, [&] { impl = handle->impl; }))
    fail(SMD_ERR_INVALID_USAGE, "comm %p is not a live communicator (destroyed, or never created)",
         static_cast<const void *>(handle));
  return impl;
}

smd_comm_t *new_comm_handle(std::shared_ptr<Comm> comm) {
  auto *h = new smd_comm{std::move(comm)};
  comm_registry().add(h);
  return h;
}

void release_comm_handle(smd_comm_t *handle) {
  std::shared_ptr<Comm> impl = std::move(handle->impl);
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
