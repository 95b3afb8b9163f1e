// Unit tests of the ucx plugin's pure parts: the address blob, tags with
// the sender's rank, and the unmap hook that reports to the core.
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "address.h"
#include "unmap_hook.h"
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

// What the hook reported, as the core's report function would keep it:
// no lock, no allocation (it runs inside munmap).
std::atomic<uintptr_t> g_watched{0};
std::atomic<bool> g_seen{false};

void report(const void *start, size_t size) {
  auto lo = reinterpret_cast<uintptr_t>(start);
  uintptr_t watched = g_watched.load();
  if (watched != 0 && lo <= watched && lo + size > watched) g_seen.store(true);
}

TEST(UnmapHook, ReportsRealUnmapsThroughUcm) {
  if (!unmap_hook_attach(report)) GTEST_SKIP() << "UCM delivers no memory events here";
  const size_t n = size_t(4) << 20;
  void *p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  g_watched.store(reinterpret_cast<uintptr_t>(p));
  munmap(p, n);
  unmap_hook_detach();
  EXPECT_TRUE(g_seen.load()) << "the munmap of a 4 MiB mapping was not reported";
}

}  // namespace
