// The key-value store the world is formed through. The TCP store served by
// rank 0 is one implementation; a framework's own store (injected through
// smd_store_ops_t) is another; PrefixStore namespaces either.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/util/bytes.h"
#include "core/util/clock.h"

namespace smd {

class Store {
 public:
  virtual ~Store() = default;

  // Store value under key, replacing an earlier value.
  virtual void set(const std::string &key, const Bytes &value) = 0;

  // Wait until key exists, then return its value. Throws smd::Error
  // SMD_ERR_TIMEOUT at the deadline (the message names the key), or
  // SMD_ERR_BOOTSTRAP if the store is gone.
  virtual Bytes get(const std::string &key, Deadline deadline) = 0;

  // Atomically add delta to the integer under key (absent = 0); returns
  // the new value.
  virtual int64_t add(const std::string &key, int64_t delta) = 0;

  // Which of keys exist now, without waiting. Stores that cannot tell
  // return nullopt.
  virtual std::optional<std::vector<bool>> check(const std::vector<std::string> &keys) {
    (void)keys;
    return std::nullopt;
  }

  // Ranks the store saw leave without saying goodbye (crashed, killed).
  // Stores that cannot tell return an empty list.
  virtual std::vector<int> failed_ranks() { return {}; }

  // This rank leaves cleanly; later failed_ranks() elsewhere do not name it.
  virtual void goodbye() {}

  // "tcp store 127.0.0.1:29500" - for messages.
  virtual std::string describe() const = 0;
};

// Prepends a prefix to every key of an underlying store.
class PrefixStore : public Store {
 public:
  PrefixStore(std::shared_ptr<Store> inner, std::string prefix)
      : inner_(std::move(inner)), prefix_(std::move(prefix)) {}
  void set(const std::string &key, const Bytes &value) override {
    inner_->set(prefix_ + key, value);
  }
  Bytes get(const std::string &key, Deadline deadline) override {
    return inner_->get(prefix_ + key, deadline);
  }
  int64_t add(const std::string &key, int64_t delta) override {
    return inner_->add(prefix_ + key, delta);
  }
  std::optional<std::vector<bool>> check(const std::vector<std::string> &keys) override {
    std::vector<std::string> full;
    full.reserve(keys.size());
    for (const auto &k : keys) full.push_back(prefix_ + k);
    return inner_->check(full);
  }
  std::vector<int> failed_ranks() override { return inner_->failed_ranks(); }
  void goodbye() override { inner_->goodbye(); }
  std::string describe() const override {
    return inner_->describe() + " (prefix '" + prefix_ + "')";
  }

 private:
  std::shared_ptr<Store> inner_;
  std::string prefix_;
};

}  // namespace smd
