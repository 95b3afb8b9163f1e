#include "mailbox.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace smd_inproc {

void Mailbox::fill(Request *r, const void *data, size_t size, uint64_t trace_id) {
  r->trace_id = trace_id;
  size_t n = std::min(size, r->capacity);
  if (n) std::memcpy(r->buf, data, n);
  r->size = n;
  r->status = size > r->capacity ? SMD_TRANSPORT_ERR_TRUNCATED : SMD_TRANSPORT_OK;
  r->done = true;
}

smd_transport_status_t Mailbox::deliver(int32_t source, uint64_t tag, const void *data, size_t size,
                                        uint64_t trace_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return SMD_TRANSPORT_ERR_PEER;
  Key k{source, tag};
  auto w = waiting_.find(k);
  if (w != waiting_.end()) {
    Request *r = w->second.front();
    w->second.pop_front();
    if (w->second.empty()) waiting_.erase(w);
    fill(r, data, size, trace_id);
  } else {
    const auto *p = static_cast<const uint8_t *>(data);
    unexpected_[k].push_back({std::vector<uint8_t>(p, p + size), trace_id});
  }
  ++news_;
  arrived_.notify_one();
  return SMD_TRANSPORT_OK;
}

void Mailbox::post(Request *r) {
  std::lock_guard<std::mutex> lock(mu_);
  Key k{r->source, r->tag};
  auto u = unexpected_.find(k);
  if (u != unexpected_.end()) {
    Queued m = std::move(u->second.front());
    u->second.pop_front();
    if (u->second.empty()) unexpected_.erase(u);
    fill(r, m.bytes.data(), m.bytes.size(), m.trace_id);
    return;
  }
  waiting_[k].push_back(r);
}

bool Mailbox::finished(Request *r) {
  std::lock_guard<std::mutex> lock(mu_);
  news_seen_ = news_;
  if (r->done) return true;
  // The sender's deliveries happen under this lock, so a receive still
  // waiting after the sender closed never gets its message.
  if (r->sender && r->sender->closed()) {
    auto w = waiting_.find(Key{r->source, r->tag});
    if (w != waiting_.end()) {
      auto &q = w->second;
      q.erase(std::remove(q.begin(), q.end(), r), q.end());
      if (q.empty()) waiting_.erase(w);
    }
    r->status = SMD_TRANSPORT_ERR_PEER;
    r->done = true;
  }
  return r->done;
}

void Mailbox::cancel(Request *r) {
  std::lock_guard<std::mutex> lock(mu_);
  auto w = waiting_.find(Key{r->source, r->tag});
  if (w == waiting_.end()) return;
  auto &q = w->second;
  q.erase(std::remove(q.begin(), q.end(), r), q.end());
  if (q.empty()) waiting_.erase(w);
}

void Mailbox::wait(int64_t timeout_us) {
  std::unique_lock<std::mutex> lock(mu_);
  arrived_.wait_for(lock, std::chrono::microseconds(timeout_us > 0 ? timeout_us : 0),
                    [&] { return news_ != news_seen_ || closed_; });
  news_seen_ = news_;
}

void Mailbox::seen() {
  std::lock_guard<std::mutex> lock(mu_);
  news_seen_ = news_;
}

void Mailbox::close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  unexpected_.clear();
  waiting_.clear();  // their requests die with the context
  arrived_.notify_all();
}

bool Mailbox::closed() const { return closed_; }

}  // namespace smd_inproc
