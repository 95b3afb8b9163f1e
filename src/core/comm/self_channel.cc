#include "core/comm/self_channel.h"

#include <cstring>

#include "core/util/error.h"

namespace smd {

void SelfChannel::send(uint64_t tag, const void *buf, size_t size) {
  std::vector<uint8_t> msg(size);
  if (size) memcpy(msg.data(), buf, size);
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
  if (!msg.empty()) memcpy(buf, msg.data(), msg.size());
  *size = msg.size();
  return true;
}

}  // namespace smd
