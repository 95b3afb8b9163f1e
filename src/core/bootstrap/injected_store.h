// A Store over a framework's own key-value store, handed in through the
// callbacks of smd_store_ops_t (include/smd.h).
#pragma once

#include <smd.h>

#include "core/bootstrap/store.h"

namespace smd {

class InjectedStore : public Store {
 public:
  // Checks and copies the table: `ops` must be non-NULL, with struct_size
  // at least that of version 1, a version this library knows, and set, get
  // and add all present; else throws smd::Error SMD_ERR_INVALID_ARGUMENT.
  // ops->user must outlive the store.
  explicit InjectedStore(const smd_store_ops_t *ops);

  // A failing callback becomes smd::Error carrying its message ("injected
  // store set('k') failed: <message>"): SMD_ERR_TIMEOUT when it returned
  // SMD_ERR_TIMEOUT, else SMD_ERR_BOOTSTRAP. get() passes the deadline as
  // timeout_ms (-1 for none) and frees the returned value with free().
  // Not thread-safe beyond what the callbacks are (see smd.h).
  void set(const std::string &key, const Bytes &value) override;
  Bytes get(const std::string &key, Deadline deadline) override;
  int64_t add(const std::string &key, int64_t delta) override;
  // check() and failed_ranks() keep the Store defaults: the callbacks
  // cannot tell (nullopt, and an empty list).

  std::string describe() const override { return "injected store"; }

 private:
  smd_store_ops_t ops_;
};

}  // namespace smd
