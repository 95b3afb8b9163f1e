// The message of settings that differ between ranks
// (settings_disagreement): which variable, which ranks, this rank's value,
// nothing when all agree. The exchange itself runs with real processes
// (tests/errors/settings_check.sh).
#include <gtest/gtest.h>

#include "core/coll/agree/settings_agreement.h"

namespace {

using smd::SharedSetting;

TEST(SettingsAgreement, AgreeingRanksSayNothing) {
  std::vector<SharedSetting> s = {{"SMD_ALGO", "auto"}, {"SMD_CHECK", "fast"}};
  EXPECT_EQ(smd::settings_disagreement(s, {1, 2, 1, 2, 1, 2}, 3), "");
}

TEST(SettingsAgreement, NamesTheVariableTheRanksAndThisValue) {
  std::vector<SharedSetting> s = {{"SMD_ALGO", "allreduce=ring"}, {"SMD_TUNING_FILE", "numbers"}};
  // Ranks 0..3: rank 2's SMD_ALGO and ranks 1 and 3's tuning files differ.
  std::string m = smd::settings_disagreement(s, {1, 7, 1, 8, 9, 7, 1, 8}, 4);
  EXPECT_NE(m.find("SMD_ALGO differs between ranks (rank 2 not as rank 0), here "
                   "'allreduce=ring'"),
            std::string::npos)
      << m;
  // A tuning file's contents are not quoted.
  EXPECT_NE(m.find("SMD_TUNING_FILE differs between ranks (ranks 1, 3 not as rank 0):"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("numbers"), std::string::npos) << m;
}

TEST(SettingsAgreement, ManyRanksAreCounted) {
  std::vector<SharedSetting> s = {{"SMD_FUSION_BYTES", "4096"}};
  std::vector<uint64_t> d(10, 5);
  d[0] = 1;  // rank 0 alone: the nine others differ from it
  std::string m = smd::settings_disagreement(s, d, 10);
  EXPECT_NE(m.find("(ranks 1, 2, 3, 4 and 5 more not as rank 0)"), std::string::npos) << m;
}

}  // namespace
