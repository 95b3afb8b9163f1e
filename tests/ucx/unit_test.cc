// Unit tests of the ucx plugin's pure parts: the address blob, tags with
// the sender's rank, the registration cache, and the unmap log.
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cstring>
#include <vector>

#include "address.h"
#include "reg_cache.h"
#include "unmap_log.h"
#include "wire_tag.h"

using namespace smd_ucx;

namespace {

TEST(Address, RoundTrip) {
  const unsigned char worker[] = {1, 2, 3, 4, 5};
  std::vector<unsigned char> blob = address_encode(3, 8, worker, sizeof worker);
  const unsigned char *got = nullptr;
  size_t len = 0;
  char why[300] = "";
  ASSERT_TRUE(address_decode(blob.data(), blob.size(), 3, 8, &got, &len, why, sizeof why)) << why;
  ASSERT_EQ(len, sizeof worker);
  EXPECT_EQ(memcmp(got, worker, len), 0);
}

TEST(Address, RefusesWhatIsNotOurs) {
  const unsigned char worker[] = {9, 9, 9};
  std::vector<unsigned char> blob = address_encode(1, 4, worker, sizeof worker);
  const unsigned char *got = nullptr;
  size_t len = 0;
  char why[300] = "";
  EXPECT_FALSE(address_decode(blob.data(), blob.size(), 2, 4, &got, &len, why, sizeof why));
  EXPECT_NE(strstr(why, "rank 1 of a world of 4"), nullptr) << why;
  EXPECT_FALSE(address_decode(blob.data(), blob.size(), 1, 5, &got, &len, why, sizeof why));
  EXPECT_FALSE(address_decode(blob.data(), 7, 1, 4, &got, &len, why, sizeof why));
  EXPECT_NE(strstr(why, "shorter"), nullptr) << why;
  EXPECT_FALSE(address_decode(blob.data(), blob.size() - 1, 1, 4, &got, &len, why, sizeof why));
  std::vector<unsigned char> bad = blob;
  bad[0] ^= 0xff;
  EXPECT_FALSE(address_decode(bad.data(), bad.size(), 1, 4, &got, &len, why, sizeof why));
  EXPECT_NE(strstr(why, "magic"), nullptr) << why;
  bad = blob;
  bad[8] = 99;  // version
  EXPECT_FALSE(address_decode(bad.data(), bad.size(), 1, 4, &got, &len, why, sizeof why));
  EXPECT_NE(strstr(why, "version"), nullptr) << why;
  EXPECT_FALSE(address_decode(nullptr, 0, 1, 4, &got, &len, why, sizeof why));
}

TEST(WireTag, RankAboveTheCoreBits) {
  const uint64_t top = (uint64_t(1) << SMD_TRANSPORT_TAG_BITS) - 1;
  EXPECT_TRUE(tag_fits(top));
  EXPECT_FALSE(tag_fits(top + 1));
  uint64_t w = wire_tag(12345, top);
  EXPECT_EQ(wire_sender(w), 12345);
  EXPECT_EQ(w & kUserTagMask, top);
  EXPECT_NE(wire_tag(1, 7), wire_tag(2, 7));
  EXPECT_EQ(wire_sender(wire_tag(int32_t(kMaxWorld - 1), 0)), int32_t(kMaxWorld - 1));
}

void *h(int i) { return reinterpret_cast<void *>(uintptr_t(i)); }

TEST(RegCache, CoveringRegionIsShared) {
  RegCache c(4);
  std::vector<Region *> out;
  Region *a = c.insert(0x1000, 0x5000, h(1));
  EXPECT_EQ(c.acquire(0x2000, 0x3000), a);
  EXPECT_EQ(a->refs, 2u);
  EXPECT_EQ(c.acquire(0x4000, 0x6000), nullptr);  // sticks out
  c.release(a, &out);
  c.release(a, &out);
  EXPECT_TRUE(out.empty());  // idle, kept
  EXPECT_EQ(c.idle(), 1u);
  EXPECT_EQ(c.acquire(0x1000, 0x5000), a);  // reused without mapping
  EXPECT_EQ(c.idle(), 0u);
  c.release(a, &out);
  c.drop_all(&out);
  ASSERT_EQ(out.size(), 1u);
  delete out[0];
}

TEST(RegCache, IdleRegionsLeaveOldestFirst) {
  RegCache c(2);
  std::vector<Region *> out;
  Region *r[3];
  for (int i = 0; i < 3; ++i) r[i] = c.insert(uintptr_t(i + 1) << 20, (uintptr_t(i + 1) << 20) + 4096, h(i));
  c.release(r[1], &out);
  c.release(r[0], &out);
  EXPECT_TRUE(out.empty());
  c.release(r[2], &out);  // three idle, room for two: r[1] was used longest ago
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], r[1]);
  delete out[0];
  out.clear();
  c.drop_all(&out);
  EXPECT_EQ(out.size(), 2u);
  for (Region *x : out) delete x;
}

TEST(RegCache, UnmappedMemoryIsNeverReused) {
  RegCache c(8);
  std::vector<Region *> out;
  Region *idle = c.insert(0x10000, 0x20000, h(1));
  Region *live = c.insert(0x30000, 0x40000, h(2));
  c.release(idle, &out);
  c.invalidate(0x1f000, 0x31000, &out);  // touches both
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], idle);
  delete out[0];
  out.clear();
  EXPECT_TRUE(live->stale);
  EXPECT_EQ(c.acquire(0x30000, 0x31000), nullptr);  // stale: a new region is needed
  Region *fresh = c.insert(0x30000, 0x40000, h(3));
  EXPECT_EQ(c.acquire(0x30000, 0x31000), fresh);
  c.release(live, &out);  // the stale one goes as soon as it is released
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], live);
  delete out[0];
  out.clear();
  c.drop_all(&out);
  EXPECT_EQ(out.size(), 1u);
  for (Region *x : out) delete x;
}

TEST(RegCache, NoIdleRegionsWhenDisabled) {
  RegCache c(0);
  std::vector<Region *> out;
  Region *a = c.insert(0x1000, 0x2000, h(1));
  c.release(a, &out);
  ASSERT_EQ(out.size(), 1u);
  delete out[0];
  EXPECT_EQ(c.size(), 0u);
}

TEST(UnmapLog, ReadsWhatWasNotedAndNoticesLoss) {
  UnmapCursor cursor;
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  ASSERT_TRUE(unmap_log_read(&cursor, &ranges));  // catch up with whatever happened
  ranges.clear();
  unmap_log_note(0x1000, 0x2000);
  unmap_log_note(0x5000, 0x9000);
  ASSERT_TRUE(unmap_log_read(&cursor, &ranges));
  ASSERT_GE(ranges.size(), 2u);  // UCM may add real unmaps of this process
  bool first = false, second = false;
  for (auto &r : ranges) {
    first = first || (r.first == 0x1000 && r.second == 0x2000);
    second = second || (r.first == 0x5000 && r.second == 0x9000);
  }
  EXPECT_TRUE(first && second);
  ranges.clear();
  for (int i = 0; i < 5000; ++i) unmap_log_note(0x1000, 0x2000);
  EXPECT_FALSE(unmap_log_read(&cursor, &ranges));  // the ring wrapped
  ranges.clear();
  EXPECT_TRUE(unmap_log_read(&cursor, &ranges));  // and is read from now on
}

TEST(UnmapLog, HearsRealUnmapsThroughUcm) {
  UnmapCursor cursor;
  if (!unmap_log_attach(&cursor)) GTEST_SKIP() << "UCM delivers no memory events here";
  const size_t n = size_t(4) << 20;
  void *p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  auto start = reinterpret_cast<uintptr_t>(p);
  munmap(p, n);
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  bool complete = unmap_log_read(&cursor, &ranges);
  unmap_log_detach();
  ASSERT_TRUE(complete);
  bool seen = false;
  for (auto &r : ranges) seen = seen || (r.first <= start && r.second >= start + n);
  EXPECT_TRUE(seen) << "the munmap of a 4 MiB mapping was not reported";
}

}  // namespace
