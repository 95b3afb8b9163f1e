// A c10d::Store (the one torch.distributed hands a backend: a PrefixStore
// over the TCPStore of env:// and tcp://, or the FileStore of file://)
// behind smd's injected-store table, so smd forms its world through it
// instead of its own TCP store.
#pragma once

#include <smd.h>
#include <torch/csrc/distributed/c10d/Store.hpp>

namespace smd_torch {

class StoreAdapter {
 public:
  explicit StoreAdapter(c10::intrusive_ptr<c10d::Store> store);
  StoreAdapter(const StoreAdapter &) = delete;
  StoreAdapter &operator=(const StoreAdapter &) = delete;

  // For smd_init_options_t.store; valid while this adapter lives, which
  // must be as long as any communicator formed through it.
  const smd_store_ops_t *ops() const { return &ops_; }
  c10d::Store &store() const { return *store_; }

 private:
  c10::intrusive_ptr<c10d::Store> store_;
  smd_store_ops_t ops_;
};

}  // namespace smd_torch
