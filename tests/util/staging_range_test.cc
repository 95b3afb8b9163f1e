// Which staging copies use streaming stores (stage_streams): the range the
// node's staging probe measured once adopted, nothing before (the
// documented default, in a process without SMD_STAGE_STREAM_* set), and the
// probe's per-thread forcing either way. The probe itself runs with real
// processes (tests/coll/calibration_check.sh).
#include <gtest/gtest.h>

#include <thread>

#include "core/coll/algorithms/blocks/stream_copy.h"

namespace {

TEST(StagingRange, DefaultIsOrdinaryStoresUntilAProbeSaysOtherwise) {
  // Run first in this process (gtest keeps file order): nothing adopted.
  for (size_t s : {0ul, 4096ul, 65536ul, 1ul << 20}) EXPECT_FALSE(smd::stage_streams(s)) << s;
}

TEST(StagingRange, AdoptedRangeIsInclusive) {
  smd::adopt_stage_stream_range(5793, 46341);
  EXPECT_FALSE(smd::stage_streams(4096));
  EXPECT_FALSE(smd::stage_streams(5792));
  EXPECT_TRUE(smd::stage_streams(5793));
  EXPECT_TRUE(smd::stage_streams(32768));
  EXPECT_TRUE(smd::stage_streams(46341));
  EXPECT_FALSE(smd::stage_streams(46342));

  smd::adopt_stage_stream_range(131072, -1);  // no upper end
  EXPECT_FALSE(smd::stage_streams(65536));
  EXPECT_TRUE(smd::stage_streams(131072));
  EXPECT_TRUE(smd::stage_streams(size_t{1} << 40));

  smd::adopt_stage_stream_range(-1, -1);  // measured: never
  EXPECT_FALSE(smd::stage_streams(0));
  EXPECT_FALSE(smd::stage_streams(65536));
}

TEST(StagingRange, ForcingIsPerThreadAndNests) {
  smd::adopt_stage_stream_range(-1, -1);
  {
    smd::ForcedStaging streaming(true);
    EXPECT_TRUE(smd::stage_streams(64));
    bool other_thread = true;
    std::thread([&] { other_thread = smd::stage_streams(64); }).join();
    EXPECT_FALSE(other_thread);  // another thread keeps the range
    {
      smd::ForcedStaging ordinary(false);
      EXPECT_FALSE(smd::stage_streams(65536));
    }
    EXPECT_TRUE(smd::stage_streams(64));  // the outer forcing is back
  }
  EXPECT_FALSE(smd::stage_streams(64));
}

}  // namespace
