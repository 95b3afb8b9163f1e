// One context's incoming side: messages that arrived before their receive
// was posted, and receives waiting for their message, both matched by
// (sender's rank, tag). A sender copies straight into a waiting receive's
// buffer, or into the unexpected queue, under the receiver's lock; so a
// send finishes inside isend and order between two ranks with one tag is
// the order of the sends.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "smd_transport.h"

namespace smd_inproc {

class Mailbox;

// A request of either kind. Sends finish when posted; a receive finishes
// when a sender fills it (under the receiving mailbox's lock), or with
// ERR_PEER when its sender's mailbox closed with the receive still waiting.
struct Request {
  static constexpr uint32_t kMagic = 0x1a9c0e57;
  uint32_t magic = kMagic;
  bool done = false;
  smd_transport_status_t status = SMD_TRANSPORT_OK;
  size_t size = 0;  // bytes transferred
  // Receives only.
  void *buf = nullptr;
  size_t capacity = 0;
  int32_t source = -1;
  uint64_t tag = 0;
  std::shared_ptr<Mailbox> sender;  // to notice that the sender is gone
  uint64_t trace_id = 0;            // the message's (trace.h); 0 when not tracing
};

class Mailbox {
 public:
  // Hands `size` bytes from rank `source` to the receive waiting for
  // (source, tag), or queues a copy. ERR_PEER once the mailbox closed.
  // trace_id goes with the bytes to the receive that takes them.
  smd_transport_status_t deliver(int32_t source, uint64_t tag, const void *data, size_t size,
                                 uint64_t trace_id = 0);
  // Matches `r` against queued messages or leaves it waiting.
  void post(Request *r);
  // Whether `r` finished; a waiting receive whose sender closed finishes
  // with ERR_PEER. Also marks this mailbox's news as seen (wait()).
  bool finished(Request *r);
  // Removes a waiting receive; its buffer is not touched afterwards.
  void cancel(Request *r);
  // Blocks until a message arrives after the last finished()/seen(), or
  // timeout_us passes.
  void wait(int64_t timeout_us);
  void seen();
  // No more deliveries; waiting receives of others from this rank fail.
  void close();
  bool closed() const;

 private:
  struct Key {
    int32_t source;
    uint64_t tag;
    bool operator==(const Key &o) const { return source == o.source && tag == o.tag; }
  };
  struct KeyHash {
    size_t operator()(const Key &k) const {
      return std::hash<uint64_t>()(k.tag * 0x9e3779b97f4a7c15ull ^ uint64_t(uint32_t(k.source)));
    }
  };
  struct Queued {
    std::vector<uint8_t> bytes;
    uint64_t trace_id;
  };
  static void fill(Request *r, const void *data, size_t size, uint64_t trace_id);

  mutable std::mutex mu_;
  std::condition_variable arrived_;
  uint64_t news_ = 0, news_seen_ = 0;
  std::atomic<bool> closed_{false};  // read without the lock: see finished()
  std::unordered_map<Key, std::deque<Queued>, KeyHash> unexpected_;
  std::unordered_map<Key, std::deque<Request *>, KeyHash> waiting_;
};

}  // namespace smd_inproc
