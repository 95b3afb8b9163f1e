#include "store_adapter.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace smd_torch {
namespace {

c10d::Store &store_of(void *user) { return static_cast<StoreAdapter *>(user)->store(); }

// c10d stores say "timeout" only in their text (TCPStore, FileStore and
// HashStore throw plain runtime errors), so the text decides which code
// smd sees; smd then reports a timeout as a timeout, naming the key.
bool mentions_timeout(const std::string &text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("timeout") != std::string::npos || lower.find("timed out") != std::string::npos;
}

smd_result_t report(const std::string &text, char *error, size_t error_size) {
  if (error && error_size) snprintf(error, error_size, "%s", text.c_str());
  return mentions_timeout(text) ? SMD_ERR_TIMEOUT : SMD_ERR_BOOTSTRAP;
}

// Runs one store call; exceptions never cross into smd's C callbacks.
template <class F>
smd_result_t guarded(char *error, size_t error_size, F &&fn) {
  try {
    fn();
    return SMD_SUCCESS;
  } catch (const c10::Error &e) {
    return report(e.what_without_backtrace(), error, error_size);
  } catch (const std::exception &e) {
    return report(e.what(), error, error_size);
  } catch (...) {
    return report("the c10d store threw a non-standard exception", error, error_size);
  }
}

smd_result_t set(void *user, const char *key, const void *value, size_t size, char *error,
                 size_t error_size) {
  return guarded(error, error_size, [&] {
    const auto *bytes = static_cast<const uint8_t *>(value);
    store_of(user).set(key, std::vector<uint8_t>(bytes, bytes + size));
  });
}

smd_result_t get(void *user, const char *key, int64_t timeout_ms, void **value, size_t *size,
                 char *error, size_t error_size) {
  *value = nullptr;
  *size = 0;
  return guarded(error, error_size, [&] {
    c10d::Store &store = store_of(user);
    if (timeout_ms == 0) {
      // c10d reads a zero timeout as "wait forever": ask without waiting.
      if (!store.check({key})) throw std::runtime_error("timeout: the key is not there yet");
    } else if (timeout_ms > 0) {
      store.wait({key}, std::chrono::milliseconds(timeout_ms));
    }
    std::vector<uint8_t> got = store.get(key);
    void *copy = malloc(got.empty() ? 1 : got.size());
    if (!copy) throw std::runtime_error("out of memory copying a store value");
    if (!got.empty()) memcpy(copy, got.data(), got.size());
    *value = copy;
    *size = got.size();
  });
}

smd_result_t add(void *user, const char *key, int64_t delta, int64_t *new_value, char *error,
                 size_t error_size) {
  return guarded(error, error_size, [&] { *new_value = store_of(user).add(key, delta); });
}

}  // namespace

StoreAdapter::StoreAdapter(c10::intrusive_ptr<c10d::Store> store) : store_(std::move(store)) {
  TORCH_CHECK(store_, "smd: the process group was given no store");
  memset(&ops_, 0, sizeof ops_);
  ops_.struct_size = sizeof ops_;
  ops_.version = SMD_STORE_OPS_VERSION;
  ops_.user = this;
  ops_.set = set;
  ops_.get = get;
  ops_.add = add;
}

}  // namespace smd_torch
