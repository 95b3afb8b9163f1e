// Messages a rank sends to itself (point-to-point with peer == own rank):
// transports have no endpoint to self, so the core keeps them here.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <vector>

namespace smd {

class SelfChannel {
 public:
  // Queue a copy of the message (sends to self complete at once).
  void send(uint64_t tag, const void *buf, size_t size);
  // Take the oldest message with this tag if there is one. Throws
  // SMD_ERR_TRUNCATED (consuming the message) if it exceeds capacity.
  bool try_recv(uint64_t tag, void *buf, size_t capacity, size_t *size);

 private:
  std::mutex mu_;
  std::map<uint64_t, std::deque<std::vector<uint8_t>>> queues_;
};

}  // namespace smd
