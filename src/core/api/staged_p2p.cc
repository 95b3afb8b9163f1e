#include "core/api/staged_p2p.h"

#include "core/api/handles.h"
#include "core/coll/algorithms/device_staging.h"
#include "core/gpu/device_ops.h"
#include "core/gpu/pointer_kind.h"

namespace smd {
namespace {

void device_copy(void *dst, const void *src, size_t bytes, const void *device_buf) {
  gpu::DeviceScope on_device(gpu::classify_pointer(device_buf).device);
  stage_copy(dst, src, bytes);
  stage_sync();
}

}  // namespace

void *stage_p2p_send(smd_request &r, const void *device_buf, size_t bytes) {
  r.staged.resize(bytes);
  device_copy(r.staged.data(), device_buf, bytes, device_buf);
  return r.staged.data();
}

void *stage_p2p_recv(smd_request &r, void *device_buf, size_t bytes) {
  r.staged.resize(bytes);
  r.staged_into = device_buf;
  return r.staged.data();
}

void land_p2p_recv(smd_request &r, size_t bytes) {
  if (!r.staged_into) return;
  device_copy(r.staged_into, r.staged.data(), bytes, r.staged_into);
  r.staged_into = nullptr;
}

}  // namespace smd
