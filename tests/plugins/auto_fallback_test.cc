// SMD_TRANSPORT=auto between nodes, end to end: two forked ranks on fake
// nodes and a plugin directory holding every kind of unusable plugin ahead
// of tcp: efa with the wrong ABI version, ucx failing its init, a file
// that is not a shared object, one that needs a symbol nobody defines, a
// library without the entry symbol, a table missing a required entry, and
// a shared-memory plugin under another name. init still succeeds, over
// tcp, and every rank's INFO log names each plugin it skipped, its file
// and the reason.
#include <dirent.h>
#include <gtest/gtest.h>
#include <smd.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bad_plugins.h"
#include "forked_world.h"
#include "temp_dir.h"

using smd::test::bad_plugin;
using smd::test::TempDir;

namespace {

std::vector<std::string> read_logs(const std::string &dir) {
  std::vector<std::string> logs;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream in(dir + "/" + e->d_name);
      std::stringstream text;
      text << in.rdbuf();
      logs.push_back(text.str());
    }
    closedir(d);
  }
  return logs;
}

TEST(AutoTransport, SkipsUnusablePluginsBetweenNodesAndSaysWhy) {
  TempDir plugins, logs;
  const std::string efa = plugins / "libsmd-transport-efa.so";
  const std::string ucx = plugins / "libsmd-transport-ucx.so";
  const std::string local = plugins / "libsmd-transport-local.so";
  const std::string tcp = plugins / "libsmd-transport-tcp.so";
  ASSERT_EQ(symlink(bad_plugin(smd::test::kBadAbi).c_str(), efa.c_str()), 0);
  ASSERT_EQ(symlink(bad_plugin(smd::test::kBadInit).c_str(), ucx.c_str()), 0);
  ASSERT_EQ(symlink(SHM_PLUGIN_PATH, local.c_str()), 0);
  ASSERT_EQ(symlink(TCP_PLUGIN_PATH, tcp.c_str()), 0);
  // Tried after efa and ucx in name order, all before tcp.
  const std::string deps = plugins / "libsmd-transport-deps.so";
  const std::string garbage = plugins.write("libsmd-transport-garbage.so", "not an ELF file\n");
  const std::string missing = plugins / "libsmd-transport-missing.so";
  const std::string no_entry = plugins / "libsmd-transport-no-entry.so";
  ASSERT_EQ(symlink(bad_plugin(smd::test::kBadUndefined).c_str(), deps.c_str()), 0);
  ASSERT_EQ(symlink(bad_plugin(smd::test::kBadMissingEntry).c_str(), missing.c_str()), 0);
  ASSERT_EQ(symlink(bad_plugin(smd::test::kNoEntry).c_str(), no_entry.c_str()), 0);

  auto ranks = smd::test::init_forked_world(
      2, {{"SMD_TRANSPORT", "auto"},
          {"SMD_PLUGIN_PATH", plugins.path()},
          {"SMD_NODE_ID", "auto-fallback-node-%r"},
          {"SMD_DEBUG", "info"},
          {"SMD_DEBUG_SUBSYS", "init,plugin"},
          {"SMD_DEBUG_FILE", logs / "rank-%p.log"},
          // The loader goes on past the rejected efa to the one built in
          // the tree; without an EFA device that one must fail its init.
          {"SMD_EFA_PROVIDER", "efa"}});
  for (size_t r = 0; r < ranks.size(); ++r)
    EXPECT_EQ(ranks[r].result, SMD_SUCCESS) << "rank " << r << ": " << ranks[r].error;

  std::vector<std::string> texts = read_logs(logs.path());
  ASSERT_EQ(texts.size(), 2u) << "one log per rank";
  const std::vector<std::string> expected = {
      "auto transport: efa unusable, trying the next",
      "plugin " + efa + ": rejected: plugin ABI version 7, this smd needs 1",
      "auto transport: ucx unusable, trying the next",
      "(" + ucx + ") failed to initialise: no device here",
      "auto transport: deps unusable, trying the next",
      "plugin " + deps + ": cannot load: ",
      "smd_test_symbol_nobody_defines",
      "auto transport: garbage unusable, trying the next",
      "plugin " + garbage + ": cannot load: ",
      "auto transport: missing unusable, trying the next",
      "plugin " + missing + ": rejected: required entry 'irecv' is NULL",
      "auto transport: no-entry unusable, trying the next",
      "plugin " + no_entry + ": not an smd transport plugin (no symbol smd_transport_plugin_v1)",
      "auto transport: local unusable, trying the next",
      "plugin " + local + " reaches only ranks of one node",
      "loaded tcp transport from " + tcp,
      "transport between nodes: tcp (auto:",
  };
  for (const std::string &log : texts)
    for (const std::string &line : expected)
      EXPECT_NE(log.find(line), std::string::npos) << "missing \"" << line << "\" in:\n" << log;
}

}  // namespace
