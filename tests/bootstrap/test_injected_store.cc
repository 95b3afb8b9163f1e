// InjectedStore over a small callback store kept in this test.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "../../src/tool_support/callback_store.h"
#include "core/bootstrap/injected_store.h"
#include "expect_error.h"

namespace smd {
namespace {

// A map behind the smd_store_ops_t callbacks, with switches to fail.
struct MapStore : teststore::CallbackStore<MapStore> {
  std::map<std::string, Bytes> kv;
  smd_result_t fail_with = SMD_SUCCESS;
  std::string fail_message;
  int64_t last_timeout_ms = 0;

  bool failing(char *error, size_t error_size) {
    if (fail_with == SMD_SUCCESS) return false;
    snprintf(error, error_size, "%s", fail_message.c_str());
    return true;
  }
  static smd_result_t set(void *user, const char *key, const void *value, size_t size, char *error,
                          size_t error_size) {
    MapStore &s = of(user);
    if (s.failing(error, error_size)) return s.fail_with;
    auto *p = static_cast<const uint8_t *>(value);
    s.kv[key] = Bytes(p, p + size);
    return SMD_SUCCESS;
  }
  static smd_result_t get(void *user, const char *key, int64_t timeout_ms, void **value,
                          size_t *size, char *error, size_t error_size) {
    MapStore &s = of(user);
    s.last_timeout_ms = timeout_ms;
    if (s.failing(error, error_size)) return s.fail_with;
    auto it = s.kv.find(key);
    if (it == s.kv.end()) {
      snprintf(error, error_size, "no key '%s' after %lld ms", key,
               static_cast<long long>(timeout_ms));
      return SMD_ERR_TIMEOUT;
    }
    return teststore::hand_out(it->second.data(), it->second.size(), value, size);
  }
  static smd_result_t add(void *user, const char *key, int64_t delta, int64_t *new_value,
                          char *error, size_t error_size) {
    MapStore &s = of(user);
    if (s.failing(error, error_size)) return s.fail_with;
    Bytes &b = s.kv[key];
    int64_t v = b.empty() ? 0 : std::stoll(std::string(b.begin(), b.end()));
    v += delta;
    std::string t = std::to_string(v);
    b.assign(t.begin(), t.end());
    *new_value = v;
    return SMD_SUCCESS;
  }
};

TEST(InjectedStore, SetGetAdd) {
  MapStore m;
  smd_store_ops_t ops = m.ops();
  InjectedStore store(&ops);
  ops.set = nullptr;  // the table was copied
  store.set("a", Bytes{1, 0, 2});
  EXPECT_EQ(store.get("a", Deadline::after_ms(1000)), (Bytes{1, 0, 2}));
  EXPECT_GT(m.last_timeout_ms, 900);
  EXPECT_LE(m.last_timeout_ms, 1000);
  store.get("a", Deadline::never());
  EXPECT_EQ(m.last_timeout_ms, -1);
  store.set("empty", {});
  EXPECT_TRUE(store.get("empty", Deadline::never()).empty());
  EXPECT_EQ(store.add("n", 4), 4);
  EXPECT_EQ(store.add("n", -1), 3);
  EXPECT_FALSE(store.check({"a"}).has_value());
  EXPECT_TRUE(store.failed_ranks().empty());
  store.goodbye();
  EXPECT_EQ(store.describe(), "injected store");
}

TEST(InjectedStore, CallbackErrorsCarryTheirMessage) {
  MapStore m;
  smd_store_ops_t ops = m.ops();
  InjectedStore store(&ops);
  EXPECT_SMD_ERROR(SMD_ERR_TIMEOUT, "injected store get('missing') timed out: no key 'missing'",
                   store.get("missing", Deadline::after_ms(5)));
  m.fail_with = SMD_ERR_SYSTEM;
  m.fail_message = "etcd unreachable";
  EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "injected store set('k') failed: etcd unreachable",
                   store.set("k", {}));
  EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "injected store add('k') failed: etcd unreachable",
                   store.add("k", 1));
  m.fail_message = "";
  EXPECT_SMD_ERROR(SMD_ERR_BOOTSTRAP, "returned code 12 without a message",
                   store.get("k", Deadline::never()));
  // A message that fills the buffer without a terminator is cut, not overrun.
  m.fail_message = std::string(5000, 'x');
  std::string msg = test::error_of(SMD_ERR_BOOTSTRAP, [&] { store.set("k", {}); });
  EXPECT_LT(msg.size(), 1100u);
}

TEST(InjectedStore, RefusesBadTables) {
  MapStore m;
  EXPECT_SMD_ERROR(SMD_ERR_INVALID_ARGUMENT, "NULL", InjectedStore{nullptr});
  smd_store_ops_t ops = m.ops();
  ops.struct_size = 8;
  EXPECT_SMD_ERROR(SMD_ERR_INVALID_ARGUMENT, "struct_size 8", InjectedStore{&ops});
  ops = m.ops();
  ops.version = 0;
  EXPECT_SMD_ERROR(SMD_ERR_INVALID_ARGUMENT, "version 0", InjectedStore{&ops});
  ops.version = SMD_STORE_OPS_VERSION + 1;
  EXPECT_SMD_ERROR(SMD_ERR_INVALID_ARGUMENT, "version 2", InjectedStore{&ops});
  for (int which = 0; which < 3; ++which) {
    ops = m.ops();
    const char *name = which == 0 ? "set" : which == 1 ? "get" : "add";
    if (which == 0) ops.set = nullptr;
    if (which == 1) ops.get = nullptr;
    if (which == 2) ops.add = nullptr;
    EXPECT_SMD_ERROR(SMD_ERR_INVALID_ARGUMENT, std::string("lacks ") + name, InjectedStore{&ops});
  }
}

TEST(InjectedStore, UnderAPrefix) {
  MapStore m;
  smd_store_ops_t ops = m.ops();
  PrefixStore store(std::make_shared<InjectedStore>(&ops), "world1/");
  store.set("x", Bytes{9});
  EXPECT_EQ(m.kv.count("world1/x"), 1u);
  EXPECT_EQ(store.get("x", Deadline::never()), Bytes{9});
  EXPECT_EQ(store.describe(), "injected store (prefix 'world1/')");
}

}  // namespace
}  // namespace smd
