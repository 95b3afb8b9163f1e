// What every test and tool store behind the smd_store_ops_t callbacks shares: the
// table that points at the store's static set/get/add, the way back from
// the table's user pointer to the store, and the malloc'd copy get() hands
// to smd. The stores differ in where the keys live (a map, files shared by
// processes, a map with a condition variable per key).
#pragma once

#include <smd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace teststore {

// Store derives from CallbackStore<Store> and has static set, get and add
// with the smd_store_ops_t signatures (befriend CallbackStore<Store> when
// they are private).
template <class Store>
struct CallbackStore {
  smd_store_ops_t ops() {
    smd_store_ops_t o{};
    o.struct_size = sizeof o;
    o.version = SMD_STORE_OPS_VERSION;
    o.user = static_cast<Store *>(this);
    o.set = &Store::set;
    o.get = &Store::get;
    o.add = &Store::add;
    return o;
  }
  static Store &of(void *user) { return *static_cast<Store *>(user); }
};

// get()'s value: a malloc'd copy of `n` bytes that smd frees (a buffer
// even for no bytes).
inline smd_result_t hand_out(const void *data, size_t n, void **value, size_t *size) {
  *value = malloc(n ? n : 1);
  if (*value == nullptr) return SMD_ERR_NO_MEMORY;
  *size = n;
  if (n) memcpy(*value, data, n);
  return SMD_SUCCESS;
}

// When a get() given `timeout_ms` gives up; -1 (no limit) waits five
// minutes here, so that a test that went wrong ends.
inline std::chrono::steady_clock::time_point deadline_of(int64_t timeout_ms) {
  return std::chrono::steady_clock::now() +
         std::chrono::milliseconds(timeout_ms < 0 ? 300000 : timeout_ms);
}

}  // namespace teststore
