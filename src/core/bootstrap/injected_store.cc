#include "core/bootstrap/injected_store.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "core/bootstrap/store_protocol.h"
#include "core/util/error.h"

namespace smd {
namespace {

constexpr size_t kOpsV1Size = offsetof(smd_store_ops_t, add) + sizeof(smd_store_ops_t::add);
constexpr size_t kErrorSize = 1024;

// Turns a callback's failure into an smd::Error with its own words.
[[noreturn]] void callback_failed(smd_result_t rc, const char *call, const std::string &key,
                                  char *error) {
  error[kErrorSize - 1] = '\0';
  std::string shown = wire::printable(key);
  std::string said = *error ? std::string(error)
                            : format("it returned code %d without a message", static_cast<int>(rc));
  if (rc == SMD_ERR_TIMEOUT)
    fail(SMD_ERR_TIMEOUT, "injected store %s('%s') timed out: %s", call, shown.c_str(),
         said.c_str());
  fail(SMD_ERR_BOOTSTRAP, "injected store %s('%s') failed: %s", call, shown.c_str(), said.c_str());
}

}  // namespace

InjectedStore::InjectedStore(const smd_store_ops_t *ops) {
  if (!ops) fail(SMD_ERR_INVALID_ARGUMENT, "store ops table is NULL");
  if (ops->struct_size < kOpsV1Size)
    fail(SMD_ERR_INVALID_ARGUMENT,
         "store ops struct_size %zu is smaller than version 1's %zu (not "
         "filled in?)",
         ops->struct_size, kOpsV1Size);
  if (ops->version < 1 || ops->version > SMD_STORE_OPS_VERSION)
    fail(SMD_ERR_INVALID_ARGUMENT, "store ops version %u is not one this library knows (1..%d)",
         ops->version, SMD_STORE_OPS_VERSION);
  if (!ops->set || !ops->get || !ops->add)
    fail(SMD_ERR_INVALID_ARGUMENT, "store ops table lacks %s",
         !ops->set   ? "set"
         : !ops->get ? "get"
                     : "add");
  // Copy only what both sides know; fields a newer caller appended are
  // not ours to read, and ones it lacks stay zero.
  memset(&ops_, 0, sizeof ops_);
  memcpy(&ops_, ops, std::min(ops->struct_size, sizeof ops_));
  ops_.struct_size = sizeof ops_;
}

void InjectedStore::set(const std::string &key, const Bytes &value) {
  char error[kErrorSize] = {0};
  smd_result_t rc =
      ops_.set(ops_.user, key.c_str(), value.data(), value.size(), error, sizeof error);
  if (rc != SMD_SUCCESS) callback_failed(rc, "set", key, error);
}

Bytes InjectedStore::get(const std::string &key, Deadline deadline) {
  char error[kErrorSize] = {0};
  int64_t timeout_ms = deadline.at_ns() == INT64_MAX ? -1 : deadline.remaining_ms();
  void *value = nullptr;
  size_t size = 0;
  smd_result_t rc =
      ops_.get(ops_.user, key.c_str(), timeout_ms, &value, &size, error, sizeof error);
  if (rc != SMD_SUCCESS) {
    free(value);
    callback_failed(rc, "get", key, error);
  }
  if (!value && size > 0)
    fail(SMD_ERR_BOOTSTRAP, "injected store get('%s') returned %zu bytes but no buffer",
         wire::printable(key).c_str(), size);
  const auto *bytes = static_cast<const uint8_t *>(value);
  Bytes out(bytes, bytes + (value ? size : 0));
  free(value);
  return out;
}

int64_t InjectedStore::add(const std::string &key, int64_t delta) {
  char error[kErrorSize] = {0};
  int64_t result = 0;
  smd_result_t rc = ops_.add(ops_.user, key.c_str(), delta, &result, error, sizeof error);
  if (rc != SMD_SUCCESS) callback_failed(rc, "add", key, error);
  return result;
}

}  // namespace smd
