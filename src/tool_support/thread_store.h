// A key-value store shared by the rank threads of one process, behind the
// smd_store_ops_t callbacks: a world of thousands of thread ranks forms
// without a TCP connection per rank. get() waits for its key, up to its
// deadline, on that key's condition variable: a set wakes the ranks
// waiting for that key only, not all of them.
#pragma once

#include <smd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "callback_store.h"

namespace scaletest {

class ThreadStore : public teststore::CallbackStore<ThreadStore> {
 private:
  friend struct teststore::CallbackStore<ThreadStore>;

  static smd_result_t set(void *user, const char *key, const void *value, size_t size, char *,
                          size_t) {
    ThreadStore &s = of(user);
    const auto *p = static_cast<const uint8_t *>(value);
    std::lock_guard<std::mutex> lock(s.mu_);
    s.kv_[key].assign(p, p + size);
    auto w = s.waiters_.find(key);
    if (w != s.waiters_.end()) w->second->notify_all();
    return SMD_SUCCESS;
  }

  static smd_result_t get(void *user, const char *key, int64_t timeout_ms, void **value,
                          size_t *size, char *error, size_t error_size) {
    ThreadStore &s = of(user);
    std::unique_lock<std::mutex> lock(s.mu_);
    auto deadline = teststore::deadline_of(timeout_ms);
    auto it = s.kv_.find(key);
    if (it == s.kv_.end()) {
      std::shared_ptr<std::condition_variable> &cv = s.waiters_[key];
      if (!cv) cv = std::make_shared<std::condition_variable>();
      std::shared_ptr<std::condition_variable> mine = cv;
      mine->wait_until(lock, deadline, [&] { return s.kv_.count(key) != 0; });
      it = s.kv_.find(key);
      if (it == s.kv_.end()) {
        snprintf(error, error_size, "no key '%s' after %lld ms", key,
                 static_cast<long long>(timeout_ms));
        return SMD_ERR_TIMEOUT;
      }
    }
    return teststore::hand_out(it->second.data(), it->second.size(), value, size);
  }

  static smd_result_t add(void *user, const char *key, int64_t delta, int64_t *new_value, char *,
                          size_t) {
    ThreadStore &s = of(user);
    {
      std::lock_guard<std::mutex> lock(s.mu_);
      int64_t &v = s.counters_[key];
      v += delta;
      *new_value = v;
    }
    return SMD_SUCCESS;
  }

  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<std::condition_variable>> waiters_;
  std::unordered_map<std::string, std::vector<uint8_t>> kv_;
  std::unordered_map<std::string, int64_t> counters_;
};

// Rank `rank` of `size` thread ranks forms its world through `ops` (a
// ThreadStore's), with a deadline long enough for thousands of threads.
inline smd_result_t init_thread_rank(const smd_store_ops_t *ops, int rank, int size,
                                     smd_comm_t **comm) {
  smd_init_options_t o;
  smd_init_options_init(&o);
  o.rank = rank;
  o.world_size = size;
  o.store = ops;
  o.timeout_ms = 120000;
  return smd_comm_init(&o, comm);
}

}  // namespace scaletest
