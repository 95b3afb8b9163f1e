#include "core/comm/self_channel.h"

#include <cstring>

#include "core/gpu/cuda_api.h"
#include "core/gpu/device_ops.h"
#include "core/gpu/pointer_kind.h"
#include "core/util/error.h"

namespace smd {
namespace {

// A message to self may come from or go to device memory (a device
// collective on the direct route): those bytes go through the copy engines.
// Only the caller's buffer is asked about; the queued copy is host memory.
void copy(void *dst, const void *src, size_t bytes, const void *user) {
  if (!bytes) return;
  if (gpu::cuda_active() && gpu::on_device(gpu::classify_pointer(user).kind))
    return gpu::device_copy(dst, src, bytes);
  memcpy(dst, src, bytes);
}

}  // namespace

void SelfChannel::send(uint64_t tag, const void *buf, size_t size) {
  std::vector<uint8_t> msg(size);
  copy(msg.data(), buf, size, buf);
  std::lock_guard<std::mutex> lock(mu_);
  queues_[tag].push_back(std::move(msg));
}

bool SelfChannel::try_recv(uint64_t tag, void *buf, size_t capacity, size_t *size) {
  std::vector<uint8_t> msg;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = queues_.find(tag);
    if (it == queues_.end() || it->second.empty()) return false;
    msg = std::move(it->second.front());
    it->second.pop_front();
    if (it->second.empty()) queues_.erase(it);
  }
  if (msg.size() > capacity)
    fail(SMD_ERR_TRUNCATED, "message to self of %zu bytes does not fit the %zu-byte receive",
         msg.size(), capacity);
  copy(buf, msg.data(), msg.size(), buf);
  *size = msg.size();
  return true;
}

}  // namespace smd
