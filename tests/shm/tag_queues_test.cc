// TagQueues against a reference model: FIFO per tag, removal anywhere,
// and lookups that stay right while backward-shift deletion moves slots.
#include "tag_queues.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <memory>
#include <random>
#include <vector>

namespace {

struct Item {
  uint64_t tag;
  int serial;
  Item *qprev = nullptr, *qnext = nullptr;
};

TEST(TagQueues, FifoPerTag) {
  smd_shm::TagQueues<Item> q;
  Item a{7, 0}, b{9, 1}, c{7, 2}, d{7, 3};
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.pop(7), nullptr);
  for (Item *x : {&a, &b, &c, &d}) q.push(x);
  EXPECT_EQ(q.size(), 4u);
  EXPECT_EQ(q.pop(7), &a);
  EXPECT_EQ(q.pop(7), &c);
  EXPECT_EQ(q.pop(9), &b);
  EXPECT_EQ(q.pop(9), nullptr);
  EXPECT_EQ(q.pop(7), &d);
  EXPECT_TRUE(q.empty());
}

TEST(TagQueues, RemoveFromMiddleKeepsOrder) {
  smd_shm::TagQueues<Item> q;
  Item items[5] = {{1, 0}, {1, 1}, {1, 2}, {1, 3}, {1, 4}};
  for (Item &x : items) q.push(&x);
  q.remove(&items[2]);
  q.remove(&items[4]);
  q.remove(&items[0]);
  EXPECT_EQ(q.pop(1), &items[1]);
  EXPECT_EQ(q.pop(1), &items[3]);
  EXPECT_EQ(q.pop(1), nullptr);
}

TEST(TagQueues, MatchesReferenceUnderRandomTraffic) {
  std::mt19937_64 rng(12345);
  smd_shm::TagQueues<Item> q;
  std::map<uint64_t, std::deque<Item *>> model;
  std::vector<std::unique_ptr<Item>> storage;
  int serial = 0;
  for (int step = 0; step < 200000; ++step) {
    // Few distinct tags collide often; tags as multiples of a power of
    // two stress the hash.
    uint64_t tag = (rng() % 97) << (rng() % 3 == 0 ? 36 : 0);
    int op = int(rng() % 10);
    if (op < 5) {
      storage.push_back(std::make_unique<Item>(Item{tag, serial++}));
      q.push(storage.back().get());
      model[tag].push_back(storage.back().get());
    } else if (op < 9) {
      Item *got = q.pop(tag);
      auto &m = model[tag];
      Item *want = m.empty() ? nullptr : m.front();
      if (!m.empty()) m.pop_front();
      ASSERT_EQ(got, want) << "step " << step;
    } else {
      auto &m = model[tag];
      if (m.empty()) continue;
      size_t i = rng() % m.size();
      q.remove(m[i]);
      m.erase(m.begin() + long(i));
    }
  }
  size_t left = 0;
  for (auto &[tag, m] : model) {
    left += m.size();
    for (Item *x : m) ASSERT_EQ(q.pop(tag), x);
    ASSERT_EQ(q.pop(tag), nullptr);
  }
  EXPECT_TRUE(q.empty());
  EXPECT_GT(left, 0u);
}

}  // namespace
