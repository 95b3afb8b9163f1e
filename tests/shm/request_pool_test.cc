// Request ids: a reply addressed to a released (or reused) request must
// not find it.
#include "request.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

TEST(RequestPool, IdsFindLiveRequestsOnly) {
  smd_shm::RequestPool pool;
  smd_shm::Request *a = pool.alloc();
  uint64_t id = a->id();
  EXPECT_EQ(pool.find(id), a);
  pool.release(a);
  EXPECT_EQ(pool.find(id), nullptr);
  smd_shm::Request *b = pool.alloc();  // reuses the slot
  EXPECT_EQ(b, a);
  EXPECT_NE(b->id(), id);
  EXPECT_EQ(pool.find(id), nullptr);
  EXPECT_EQ(pool.find(b->id()), b);
  EXPECT_EQ(pool.find(uint64_t(1) << 31), nullptr);
}

TEST(RequestPool, AddressesStayStableAcrossGrowth) {
  smd_shm::RequestPool pool;
  std::vector<smd_shm::Request *> live;
  for (int i = 0; i < 5000; ++i) {
    live.push_back(pool.alloc());
    live.back()->tag = uint64_t(i);
  }
  for (int i = 0; i < 5000; ++i) {
    EXPECT_EQ(live[size_t(i)]->tag, uint64_t(i));
    EXPECT_EQ(pool.find(live[size_t(i)]->id()), live[size_t(i)]);
  }
}

}  // namespace
