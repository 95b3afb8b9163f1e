// SMD_STAGE_ADAPT's switch (SlowTransferGuard), on a fake clock: one
// window of rounds staging over 3x slower than their copy out may be a
// preemption; two in a row switch staging to streaming stores for
// kStreamNs, then ordinary stores are measured again. Each communicator
// has its own guard.
#include <gtest/gtest.h>

#include "core/coll/algorithms/blocks/stream_copy.h"

namespace {

using G = smd::SlowTransferGuard;

int64_t g_fake_now = 1000000000;
int64_t fake_clock() { return g_fake_now; }

void observe_window(G &g, uint64_t staging, uint64_t copy_out) {
  for (int i = 0; i < G::kWindow; ++i) g.observe(staging, copy_out);
}

class SlowTransferGuardTest : public ::testing::Test {
 protected:
  void SetUp() override { g_fake_now = 1000000000; }
};

TEST_F(SlowTransferGuardTest, StaysOffForNormalRatios) {
  G g(&fake_clock);
  for (int w = 0; w < 20; ++w) observe_window(g, 150 + w * 5, 100);  // 1.5x .. 2.45x
  observe_window(g, 300, 100);                                       // exactly 3x: not slow
  observe_window(g, 300, 100);
  EXPECT_FALSE(g.streaming());
  observe_window(g, 500, 100);  // slow, fast, slow: no switch
  observe_window(g, 100, 100);
  observe_window(g, 500, 100);
  EXPECT_FALSE(g.streaming());
}

TEST_F(SlowTransferGuardTest, StreamsAfterTwoSlowWindowsThenMeasuresAgain) {
  G g(&fake_clock);
  for (int i = 0; i < G::kWindow; ++i) g.observe(500, 100);      // one slow window
  for (int i = 0; i < G::kWindow - 1; ++i) g.observe(500, 100);  // not yet full
  EXPECT_FALSE(g.streaming());
  g.observe(500, 100);  // the second slow window in a row
  EXPECT_TRUE(g.streaming());
  g_fake_now += G::kStreamNs - 1;
  EXPECT_TRUE(g.streaming());
  g_fake_now += 1;  // the streaming period is over
  EXPECT_FALSE(g.streaming());
  // Over again: the count of slow windows started from zero at the switch.
  observe_window(g, 500, 100);
  EXPECT_FALSE(g.streaming());
  observe_window(g, 500, 100);
  EXPECT_TRUE(g.streaming());
  g_fake_now += G::kStreamNs;
  observe_window(g, 120, 100);  // fast again: stays off
  observe_window(g, 120, 100);
  EXPECT_FALSE(g.streaming());
}

TEST_F(SlowTransferGuardTest, AWindowIsJudgedByItsSums) {
  G h(&fake_clock);
  for (int w = 0; w < 2; ++w) {
    h.observe(10000, 100);  // one very slow round among fast ones tips it
    for (int i = 1; i < G::kWindow; ++i) h.observe(100, 100);
  }
  EXPECT_TRUE(h.streaming());
}

TEST_F(SlowTransferGuardTest, TwoArenasSwitchIndependently) {
  G slow(&fake_clock), fast(&fake_clock);
  for (int w = 0; w < 2; ++w) {
    observe_window(slow, 500, 100);
    observe_window(fast, 150, 100);
  }
  EXPECT_TRUE(slow.streaming());
  EXPECT_FALSE(fast.streaming());
  // A slow window each, interleaved: neither has two in a row of its own
  // broken by the other's.
  g_fake_now += G::kStreamNs;
  observe_window(fast, 500, 100);
  observe_window(slow, 150, 100);
  observe_window(fast, 500, 100);
  EXPECT_TRUE(fast.streaming());
  EXPECT_FALSE(slow.streaming());
}

}  // namespace
