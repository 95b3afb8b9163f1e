// The core's registration cache (src/core/plugin/registration_cache.h)
// and the unmap log behind it, with a fake plugin's register/deregister.
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <stdexcept>
#include <vector>

#include "core/plugin/registration_cache.h"
#include "core/plugin/unmap_log.h"

using namespace smd;

namespace {

constexpr size_t kPage = 4096;

// A fake plugin: hands out numbered handles and remembers which are live.
struct FakePlugin {
  int next = 1;
  std::set<void *> live;
  std::vector<std::pair<uintptr_t, size_t>> registered;
  bool refuse = false;

  RegistrationCache make(size_t max_idle) {
    return RegistrationCache(
        [this](void *base, size_t len) {
          if (refuse) throw std::runtime_error("no");
          registered.emplace_back(reinterpret_cast<uintptr_t>(base), len);
          void *h = reinterpret_cast<void *>(uintptr_t(next++));
          live.insert(h);
          return h;
        },
        [this](void *mr) { EXPECT_EQ(live.erase(mr), 1u) << "deregistered twice"; }, max_idle,
        kPage);
  }
};

const void *at(uintptr_t a) { return reinterpret_cast<const void *>(a); }

// Keeps the unmap log covered for the duration of a test, as a plugin
// that reports unmaps (ucx) would.
struct Covered {
  Covered() { unmap_coverage_begin(); }
  ~Covered() { unmap_coverage_end(); }
};

TEST(RegistrationCache, PagesOfOneRegionServeEveryBufferInside) {
  FakePlugin f;
  {
    RegistrationCache c = f.make(4);
    auto *a = c.acquire(at(0x10010), 0x3000);  // pages 0x10000 .. 0x14000
    ASSERT_EQ(f.registered.size(), 1u);
    EXPECT_EQ(f.registered[0].first, 0x10000u);
    EXPECT_EQ(f.registered[0].second, 0x4000u);
    EXPECT_EQ(c.acquire(at(0x12000), 100), a);  // inside: shared
    EXPECT_EQ(a->refs, 2u);
    auto *b = c.acquire(at(0x13f00), 0x200);  // sticks out: a new region
    EXPECT_NE(b, a);
    EXPECT_EQ(c.hits(), 1u);
    EXPECT_EQ(c.misses(), 2u);
    c.release(a);
    c.release(a);
    c.release(b);
  }
  EXPECT_TRUE(f.live.empty()) << "the cache deregisters everything when it goes";
}

TEST(RegistrationCache, WithoutUnmapReportsNothingIsKeptIdle) {
  ASSERT_EQ(unmap_coverage(), 0u);
  FakePlugin f;
  RegistrationCache c = f.make(8);
  auto *a = c.acquire(at(0x20000), 10);
  c.release(a);
  EXPECT_EQ(c.regions(), 0u);  // deregistered at once: nobody says when memory goes
  EXPECT_TRUE(f.live.empty());
  c.acquire(at(0x20000), 10);
  EXPECT_EQ(f.registered.size(), 2u);
  c.clear();
}

TEST(RegistrationCache, IdleRegionsAreReusedAndLeaveOldestFirst) {
  Covered covered;
  FakePlugin f;
  RegistrationCache c = f.make(2);
  RegistrationCache::Region *r[3];
  for (int i = 0; i < 3; ++i) r[i] = c.acquire(at(uintptr_t(i + 1) << 20), 8);
  c.release(r[1]);
  c.release(r[0]);
  EXPECT_EQ(c.idle(), 2u);
  EXPECT_EQ(c.acquire(at(1u << 20), 8), r[0]);  // reused, no registration
  EXPECT_EQ(f.registered.size(), 3u);
  c.release(r[0]);
  c.release(r[2]);  // three idle, room for two: r[1] was used longest ago
  EXPECT_EQ(c.idle(), 2u);
  EXPECT_EQ(f.live.size(), 2u);
  c.acquire(at(2u << 20), 8);  // r[1]'s memory: registered again
  EXPECT_EQ(f.registered.size(), 4u);
}

TEST(RegistrationCache, UnmappedMemoryIsNeverReused) {
  Covered covered;
  FakePlugin f;
  RegistrationCache c = f.make(8);
  auto *idle = c.acquire(at(0x100000), 0x10000);
  auto *busy = c.acquire(at(0x300000), 0x10000);
  c.release(idle);
  unmap_log_note(0x10f000, 0x301000);  // touches both
  auto *fresh = c.acquire(at(0x300000), 0x1000);
  EXPECT_NE(fresh, busy);        // the busy one is stale: never handed out again
  EXPECT_EQ(f.live.size(), 2u);  // the idle one went at once
  c.release(busy);               // the stale one goes when released
  EXPECT_EQ(f.live.size(), 1u);
  c.release(fresh);
  EXPECT_EQ(c.acquire(at(0x300000), 0x1000), fresh);  // kept: nothing unmapped it
  c.release(fresh);
}

TEST(RegistrationCache, LostReportsOrEndedCoverageDropEverythingIdle) {
  FakePlugin f;
  std::optional<Covered> covered(std::in_place);
  RegistrationCache c = f.make(8);
  c.release(c.acquire(at(0x400000), 8));
  EXPECT_EQ(c.idle(), 1u);
  for (int i = 0; i < 5000; ++i) unmap_log_note(0x1000, 0x2000);  // the ring wraps
  c.release(c.acquire(at(0x500000), 8));
  EXPECT_EQ(f.registered.size(), 2u);
  EXPECT_EQ(c.idle(), 1u) << "the region kept before the loss is gone";
  covered.reset();  // the plugin that reported unmaps finalized
  c.acquire(at(0x600000), 8);
  EXPECT_EQ(c.idle(), 0u);
  // Coverage again is a new period: nothing registered before is reused.
  covered.emplace();
  c.release(c.acquire(at(0x700000), 8));
  EXPECT_EQ(c.idle(), 1u);
}

TEST(RegistrationCache, AFailedRegistrationLeavesNothingBehind) {
  FakePlugin f;
  RegistrationCache c = f.make(8);
  f.refuse = true;
  EXPECT_THROW(c.acquire(at(0x800000), 8), std::runtime_error);
  EXPECT_EQ(c.regions(), 0u);
}

TEST(UnmapLog, ReadsWhatWasNotedAndNoticesLoss) {
  UnmapCursor cursor;
  unmap_log_attach(&cursor);
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  unmap_log_note(0x1000, 0x2000);
  unmap_log_note(0x5000, 0x9000);
  ASSERT_TRUE(unmap_log_read(&cursor, &ranges));
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[1], std::make_pair(uintptr_t(0x5000), uintptr_t(0x9000)));
  ranges.clear();
  for (int i = 0; i < 5000; ++i) unmap_log_note(0x1000, 0x2000);
  EXPECT_FALSE(unmap_log_read(&cursor, &ranges));  // the ring wrapped
  ranges.clear();
  EXPECT_TRUE(unmap_log_read(&cursor, &ranges));  // and is read from now on
  EXPECT_TRUE(ranges.empty());
}

}  // namespace
