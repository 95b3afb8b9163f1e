// The plugin loader (src/core/plugin) turns every broken plugin into an
// SMD_ERR_PLUGIN that names the file and the reason, searches
// SMD_PLUGIN_PATH before its own directories, skips a broken candidate for
// a later good one, and lists the plugins it can see.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../bootstrap/expect_error.h"
#include "bad_plugins.h"
#include "core/plugin/plugin_loader.h"
#include "core/plugin/transport.h"
#include "scoped_env.h"
#include "temp_dir.h"

using namespace smd;
using smd::test::bad_plugin;
using smd::test::ScopedEnv;
using smd::test::TempDir;

namespace {

// The message of the SMD_ERR_PLUGIN that `fn` throws.
template <class Fn>
std::string plugin_error(Fn &&fn) {
  return test::error_of(SMD_ERR_PLUGIN, std::forward<Fn>(fn));
}

#define EXPECT_CONTAINS(message, words) \
  EXPECT_PRED_FORMAT2(::smd::test::message_contains, message, std::string(words))

struct Rejection {
  const char *plugin;
  std::string reason;  // what the message says after "plugin <path>: "
};

std::string rejection_name(const ::testing::TestParamInfo<Rejection> &info) {
  std::string n = info.param.plugin;
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
}

const size_t kV1Minimum = offsetof(smd_transport_v1_t, progress) + sizeof(void *);

const std::vector<Rejection> kRejections = {
    {test::kBadAbi, "rejected: plugin ABI version 7, this smd needs 1"},
    {test::kBadMissingEntry, "rejected: required entry 'irecv' is NULL"},
    {test::kBadNullTable, "rejected: its entry function returned NULL"},
    {test::kNoEntry, "not an smd transport plugin (no symbol smd_transport_plugin_v1)"},
    {test::kBadUndefined, "cannot load: "},
    {test::kBadSmallTable, "rejected: table of " + std::to_string(kV1Minimum - sizeof(void *)) +
                               " bytes is smaller than the v1 minimum " +
                               std::to_string(kV1Minimum)},
    {test::kBadCaps,
     "rejected: declares CAP_SEGMENTS but segment_create/attach/release are missing"},
};

class Rejected : public ::testing::TestWithParam<Rejection> {};

TEST_P(Rejected, ByPath) {
  std::string path = bad_plugin(GetParam().plugin);
  std::string m = plugin_error([&] { open_plugin_file(path); });
  EXPECT_CONTAINS(m, "plugin " + path + ": " + GetParam().reason);
}

TEST_P(Rejected, ByNameThroughPluginPath) {
  ScopedEnv path("SMD_PLUGIN_PATH", test::bad_plugin_dir());
  std::string name = GetParam().plugin;
  std::string m = plugin_error([&] { load_plugin(name); });
  EXPECT_CONTAINS(m, "transport plugin '" + name + "' could not be used");
  EXPECT_CONTAINS(m, "plugin " + bad_plugin(name) + ": " + GetParam().reason);
}

TEST_P(Rejected, RepeatedlyWithTheSameAnswer) {
  // A rejected file is not cached as loaded: asking again fails again.
  std::string path = bad_plugin(GetParam().plugin);
  std::string first = plugin_error([&] { open_plugin_file(path); });
  std::string second = plugin_error([&] { open_plugin_file(path); });
  EXPECT_EQ(first, second);
}

INSTANTIATE_TEST_SUITE_P(Plugins, Rejected, ::testing::ValuesIn(kRejections), rejection_name);

TEST(Loader, UnresolvedSymbolIsNamed) {
  std::string m = plugin_error([&] { open_plugin_file(bad_plugin(test::kBadUndefined)); });
  EXPECT_CONTAINS(m, "smd_test_symbol_nobody_defines");
}

TEST(Loader, FilesThatAreNotSharedObjects) {
  TempDir dir;
  std::string empty = dir.write("libsmd-transport-empty.so", "");
  std::string garbage = dir.write("libsmd-transport-garbage.so",
                                  "\x7f"
                                  "ELF, but not really\n");
  for (const std::string &path : {empty, garbage}) {
    std::string m = plugin_error([&] { open_plugin_file(path); });
    EXPECT_CONTAINS(m, "plugin " + path + ": cannot load: ");
  }
  ScopedEnv path("SMD_PLUGIN_PATH", dir.path());
  std::string m = plugin_error([&] { load_plugin("garbage"); });
  EXPECT_CONTAINS(m, "plugin " + garbage + ": cannot load: ");
}

TEST(Loader, MissingFileOrDirectory) {
  TempDir dir;
  std::string m = plugin_error([&] { open_plugin_file(dir / "libsmd-transport-gone.so"); });
  EXPECT_CONTAINS(m, dir / "libsmd-transport-gone.so");
  EXPECT_CONTAINS(m, "no such file");
  std::filesystem::create_directory(dir / "libsmd-transport-folder.so");
  m = plugin_error([&] { open_plugin_file(dir / "libsmd-transport-folder.so"); });
  EXPECT_CONTAINS(m, "no such file");
}

TEST(Loader, UnknownNameListsTheDirectoriesSearched) {
  TempDir dir;
  ScopedEnv path("SMD_PLUGIN_PATH", dir.path());
  std::string m = plugin_error([&] { load_plugin("nosuch"); });
  EXPECT_CONTAINS(
      m, "transport plugin 'nosuch' not found: no libsmd-transport-nosuch.so in " + dir.path());
  EXPECT_CONTAINS(m, "SMD_PLUGIN_PATH");
}

TEST(Loader, InitFailureCarriesThePluginsExplanation) {
  std::string path = bad_plugin(test::kBadInit);
  std::shared_ptr<LoadedPlugin> plugin = open_plugin_file(path);  // a valid table
  ASSERT_TRUE(plugin);
  EXPECT_EQ(plugin->name, test::kBadInit);
  EXPECT_EQ(plugin->path, path);
  TransportPlacement where;
  where.world_size = where.local_size = 2;
  std::string m = plugin_error([&] { Transport t(plugin, where); });
  EXPECT_CONTAINS(m, std::string("transport ") + test::kBadInit + " (" + path +
                         ") failed to initialise: no device here");
}

TEST(Loader, OlderV1TableLoadsWithoutItsOptionalEntries) {
  // Entries past struct_size are absent, whatever the memory there holds.
  std::string path = bad_plugin(test::kOldV1);
  std::shared_ptr<LoadedPlugin> plugin = open_plugin_file(path);
  ASSERT_TRUE(plugin);
  EXPECT_EQ(plugin->name, test::kOldV1);
  TransportPlacement where;
  where.world_size = where.local_size = 2;
  Transport t(plugin, where);
  EXPECT_FALSE(t.has_wait());
  EXPECT_FALSE(t.has_check_peer());
  EXPECT_FALSE(t.wait(1000));
  EXPECT_TRUE(t.peer_alive(nullptr));
}

void application_handler(int) {}

// What a plugin's libraries do to the process's signals is undone: the
// application's handlers stay (src/core/plugin/signal_guard.h).
TEST(Loader, PluginsLeaveTheApplicationsSignalHandlersAlone) {
  struct sigaction mine {
  }, before_segv{}, old_int{}, old_usr1{};
  mine.sa_handler = application_handler;
  sigemptyset(&mine.sa_mask);
  ASSERT_EQ(sigaction(SIGINT, &mine, &old_int), 0);
  ASSERT_EQ(sigaction(SIGUSR1, &mine, &old_usr1), 0);
  sigaction(SIGSEGV, nullptr, &before_segv);
  {
    std::shared_ptr<LoadedPlugin> plugin = open_plugin_file(bad_plugin(test::kSignalGrabber));
    ASSERT_TRUE(plugin);
    TransportPlacement where;
    where.world_size = where.local_size = 2;
    Transport t(plugin, where);
  }
  struct sigaction now {};
  sigaction(SIGINT, nullptr, &now);
  EXPECT_EQ(now.sa_handler, application_handler) << "SIGINT's handler was replaced";
  sigaction(SIGUSR1, nullptr, &now);
  EXPECT_EQ(now.sa_handler, application_handler) << "SIGUSR1's handler (set at load) stayed";
  sigaction(SIGSEGV, nullptr, &now);
  EXPECT_EQ(now.sa_handler, before_segv.sa_handler);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGUSR1, &old_usr1, nullptr);
}

TEST(Loader, PluginPathIsSearchedFirst) {
  TempDir dir;
  std::string shadow = dir.copy(bad_plugin(test::kBadInit), "libsmd-transport-shm.so");
  {
    ScopedEnv path("SMD_PLUGIN_PATH", dir.path() + ":" + BUILT_PLUGIN_PATH);
    std::vector<std::string> dirs = plugin_search_dirs();
    ASSERT_FALSE(dirs.empty());
    EXPECT_EQ(dirs[0], dir.path());
    auto p = load_plugin("shm");
    EXPECT_EQ(p->path, shadow);
    EXPECT_EQ(p->name, test::kBadInit);
  }
  {
    ScopedEnv path("SMD_PLUGIN_PATH", std::string(BUILT_PLUGIN_PATH) + ":" + dir.path());
    auto p = load_plugin("shm");
    EXPECT_NE(p->path, shadow);
    EXPECT_EQ(p->name, "shm");
  }
}

TEST(Loader, PluginPathMayNamePluginFiles) {
  // The parameter registry documents SMD_PLUGIN_PATH as "colon-separated
  // directories or plugin files" (src/core/util/params.cc).
  TempDir dir;
  std::string file = dir.copy(bad_plugin(test::kOldV1), "libsmd-transport-listed.so");
  ScopedEnv path("SMD_PLUGIN_PATH", file);
  std::vector<std::string> names = discover_plugins();
  std::string seen;
  for (const auto &n : names) seen += " " + n;
  EXPECT_NE(std::find(names.begin(), names.end(), "listed"), names.end())
      << "a plugin file named in SMD_PLUGIN_PATH is not discovered; found:" << seen;
  try {
    EXPECT_EQ(load_plugin("listed")->path, file);
  } catch (const Error &e) {
    ADD_FAILURE() << "a plugin file named in SMD_PLUGIN_PATH is not found: " << e.what();
  }
}

TEST(Loader, BrokenCandidateIsSkippedForALaterGoodOne) {
  TempDir dir;
  dir.copy(bad_plugin(test::kBadAbi), "libsmd-transport-shm.so");
  ScopedEnv path("SMD_PLUGIN_PATH", dir.path() + ":" + BUILT_PLUGIN_PATH);
  auto p = load_plugin("shm");
  EXPECT_EQ(p->name, "shm");
  EXPECT_NE(p->path.rfind(dir.path(), 0), 0u) << p->path;
}

TEST(Loader, DiscoverListsNamesInSearchOrderWithoutDuplicates) {
  TempDir first, second;
  // Discovery goes by file name only: nothing is loaded, so empty files do.
  first.write("libsmd-transport-beta.so", "");
  first.write("libsmd-transport-gamma.so", "");
  first.write("libsmd-transport-notes.txt", "");
  first.write("libother.so", "");
  second.write("libsmd-transport-alpha.so", "");
  second.write("libsmd-transport-beta.so", "");
  ScopedEnv path("SMD_PLUGIN_PATH", first.path() + ":" + second.path());
  std::vector<std::string> names = discover_plugins();
  ASSERT_GE(names.size(), 3u);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 3),
            (std::vector<std::string>{"beta", "gamma", "alpha"}));
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size())
      << "a name is listed twice";
  for (const auto &n : names) EXPECT_NE(n, "notes") << "a .txt file was listed";
}

TEST(Loader, DiscoverSeesTheBrokenPluginsByName) {
  ScopedEnv path("SMD_PLUGIN_PATH", test::bad_plugin_dir());
  std::vector<std::string> names = discover_plugins();
  for (const char *n : {test::kBadAbi, test::kBadMissingEntry, test::kBadNullTable, test::kBadInit,
                        test::kBadUndefined, test::kBadSmallTable, test::kBadCaps, test::kNoEntry,
                        test::kOldV1, test::kSignalGrabber})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n << " not listed";
}

}  // namespace
