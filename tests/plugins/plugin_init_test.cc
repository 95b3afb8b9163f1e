// Through the public API: when SMD_TRANSPORT names a plugin that cannot be
// used, smd_comm_init fails on every rank of a two-process world with
// SMD_ERR_PLUGIN, and smd_last_error() names the file and the reason.
#include <gtest/gtest.h>
#include <smd.h>

#include <string>

#include "bad_plugins.h"
#include "forked_world.h"

using smd::test::bad_plugin;

namespace {

struct Case {
  const char *label;
  std::string transport;    // SMD_TRANSPORT
  std::string plugin_path;  // prepended to SMD_PLUGIN_PATH ("" = as given)
  std::string names;        // the file (or plugin) the message must name
  std::string reason;
};

std::vector<Case> cases() {
  using namespace smd::test;
  return {
      {"abi", bad_plugin(kBadAbi), "", bad_plugin(kBadAbi), "ABI version 7"},
      {"missing_entry", bad_plugin(kBadMissingEntry), "", bad_plugin(kBadMissingEntry),
       "'irecv' is NULL"},
      {"null_table", bad_plugin(kBadNullTable), "", bad_plugin(kBadNullTable),
       "entry function returned NULL"},
      {"no_entry", bad_plugin(kNoEntry), "", bad_plugin(kNoEntry),
       "no symbol smd_transport_plugin_v1"},
      {"unloadable", bad_plugin(kBadUndefined), "", bad_plugin(kBadUndefined), "cannot load"},
      {"init_fails", bad_plugin(kBadInit), "", bad_plugin(kBadInit),
       "failed to initialise: no device here"},
      {"init_fails_by_name", kBadInit, bad_plugin_dir(), bad_plugin(kBadInit),
       "failed to initialise: no device here"},
      {"abi_by_name", kBadAbi, bad_plugin_dir(), bad_plugin(kBadAbi), "ABI version 7"},
      {"missing_file", bad_plugin_dir() + "/libsmd-transport-gone.so", "",
       bad_plugin_dir() + "/libsmd-transport-gone.so", "no such file"},
      {"unknown_name", "nosuch", "", "libsmd-transport-nosuch.so", "not found"},
  };
}

class BadTransport : public ::testing::TestWithParam<Case> {};

TEST_P(BadTransport, CommInitFailsWithPluginErrorOnEveryRank) {
  const Case &c = GetParam();
  std::vector<std::pair<std::string, std::string>> env = {{"SMD_TRANSPORT", c.transport}};
  if (!c.plugin_path.empty()) {
    const char *old = getenv("SMD_PLUGIN_PATH");
    env.emplace_back("SMD_PLUGIN_PATH", c.plugin_path + (old ? std::string(":") + old : ""));
  }
  auto ranks = smd::test::init_forked_world(2, env);
  for (size_t r = 0; r < ranks.size(); ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_EQ(ranks[r].result, SMD_ERR_PLUGIN)
        << smd_result_string(static_cast<smd_result_t>(ranks[r].result)) << ": " << ranks[r].error;
    EXPECT_NE(ranks[r].error.find(c.names), std::string::npos) << ranks[r].error;
    EXPECT_NE(ranks[r].error.find(c.reason), std::string::npos) << ranks[r].error;
  }
}

INSTANTIATE_TEST_SUITE_P(Plugins, BadTransport, ::testing::ValuesIn(cases()),
                         [](const auto &info) { return std::string(info.param.label); });

}  // namespace
