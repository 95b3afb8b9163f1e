// The check of the SMD_* environment at init: misspelled names get the
// closest known one, malformed values the accepted ones; names read
// outside the registry and the plugins' own variables pass.
#include <gtest/gtest.h>

#include "core/util/env_check.h"

using namespace smd;

namespace {
std::vector<std::string> no_plugins() { return {}; }
std::string joined(const std::vector<std::string> &v) {
  std::string s;
  for (auto &x : v) s += x + "\n";
  return s;
}
}  // namespace

TEST(EnvCheck, EditDistanceCountsSwapsAsOneEdit) {
  EXPECT_EQ(edit_distance("SMD_TRANSPORT", "SMD_TRANSPORT"), 0u);
  EXPECT_EQ(edit_distance("SMD_TRANSPORTT", "SMD_TRANSPORT"), 1u);
  EXPECT_EQ(edit_distance("SMD_TIEMOUT", "SMD_TIMEOUT"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
}

TEST(EnvCheck, MisspelledNameSuggestsTheClosest) {
  auto p = environment_problems({"SMD_TRANSPORTT=shm", "PATH=/bin"}, no_plugins);
  ASSERT_EQ(p.size(), 1u) << joined(p);
  EXPECT_NE(p[0].find("SMD_TRANSPORTT is not a variable smd reads; did you mean SMD_TRANSPORT?"),
            std::string::npos)
      << p[0];
  p = environment_problems({"SMD_TIEMOUT=3"}, no_plugins);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].find("did you mean SMD_TIMEOUT?"), std::string::npos) << p[0];
}

TEST(EnvCheck, FarNamesGetNoSuggestion) {
  auto p = environment_problems({"SMD_SOMETHING_ELSE=1"}, no_plugins);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].find("did you mean"), std::string::npos) << p[0];
}

TEST(EnvCheck, KnownForeignAndPluginNamesPass) {
  bool asked = false;
  auto plugins = [&] {
    asked = true;
    return std::vector<std::string>{"SMD_TCP_ADDR"};
  };
  auto p = environment_problems(
      {"SMD_TRANSPORT=tcp", "SMD_TIMEOUT=30", "SMD_LIBRARY=/x.so", "SMD_TEST_HEAVY=0"}, plugins);
  EXPECT_TRUE(p.empty()) << joined(p);
  EXPECT_FALSE(asked) << "plugins are loaded only for a name the registry does not know";
  p = environment_problems({"SMD_TCP_ADDR=lo", "SMD_TCP_ADR=lo"}, plugins);
  EXPECT_TRUE(asked);
  ASSERT_EQ(p.size(), 1u) << joined(p);
  EXPECT_NE(p[0].find("did you mean SMD_TCP_ADDR?"), std::string::npos) << p[0];
}

TEST(EnvCheck, MalformedValuesNameTheAcceptedOnes) {
  auto p = environment_problems({"SMD_DEBUG=bogus", "SMD_DEBUG_FILE=x"}, no_plugins);
  ASSERT_EQ(p.size(), 1u) << joined(p);
  EXPECT_NE(p[0].find("SMD_DEBUG=bogus is not one of none, off, warn, info or trace"),
            std::string::npos)
      << p[0];
  p = environment_problems({"SMD_DEBUG=INFO", "SMD_TIMEOUT=0.5", "SMD_STAGE_ADAPT=off",
                            "SMD_REG_CACHE=8", "SMD_CHECK=fast"},
                           no_plugins);
  EXPECT_TRUE(p.empty()) << joined(p);
  p = environment_problems({"SMD_TIMEOUT=10s", "SMD_REG_CACHE=many", "SMD_STAGE_ADAPT=maybe"},
                           no_plugins);
  ASSERT_EQ(p.size(), 3u) << joined(p);
  EXPECT_NE(p[0].find("SMD_TIMEOUT=10s is not a number of seconds"), std::string::npos) << p[0];
  EXPECT_NE(p[1].find("SMD_REG_CACHE=many is not an integer"), std::string::npos) << p[1];
  EXPECT_NE(p[2].find("SMD_STAGE_ADAPT=maybe is not a boolean"), std::string::npos) << p[2];
}
