// smd-transport-check judges the plugin file before any test runs: a file
// the core would reject ends the run with exit status 2 and the reason; a
// plugin that exports more than its entry symbol gets a warning naming
// the extra symbols; a clean plugin gets neither.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "bad_plugins.h"
#include "temp_dir.h"

using smd::test::bad_plugin;

namespace {

struct CheckRun {
  int exit_status = -1;
  std::string output;  // stdout and stderr together
};

CheckRun run_check(const std::string &args) {
  CheckRun r;
  std::string cmd = std::string("'") + TRANSPORT_CHECK_PATH + "' " + args + " 2>&1";
  FILE *p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  int status = pclose(p);
  if (status != -1 && WIFEXITED(status)) r.exit_status = WEXITSTATUS(status);
  return r;
}

std::string quoted(const std::string &path) { return "'" + path + "'"; }

TEST(TransportCheck, RejectsWhatTheLoaderRejectsWithExitStatus2) {
  smd::test::TempDir dir;
  const std::string garbage = dir.write("libsmd-transport-garbage.so", "not an ELF file\n");
  const struct {
    std::string path;
    std::string reason;
  } cases[] = {
      {bad_plugin(smd::test::kBadAbi), "ABI version 7, expected 1"},
      {bad_plugin(smd::test::kBadMissingEntry), "entry 'irecv' is NULL"},
      {bad_plugin(smd::test::kNoEntry), "missing symbol smd_transport_plugin_v1"},
      {bad_plugin(smd::test::kBadUndefined), "smd_test_symbol_nobody_defines"},
      {garbage, "cannot load"},
  };
  for (const auto &c : cases) {
    CheckRun r = run_check("-n 2 " + quoted(c.path));
    EXPECT_EQ(r.exit_status, 2) << c.path << ":\n" << r.output;
    EXPECT_NE(r.output.find(c.reason), std::string::npos) << c.path << ":\n" << r.output;
  }
}

TEST(TransportCheck, WarnsAboutSymbolsExportedBesideTheEntry) {
  // Its stub entries fail the tests; the warning comes before them.
  CheckRun r = run_check("-n 2 --only zero_byte " + quoted(bad_plugin(smd::test::kLeakyExport)));
  EXPECT_NE(r.output.find("warning: the plugin exports 1 symbol besides its entry "
                          "(smd_test_leaked_helper)"),
            std::string::npos)
      << r.output;
}

TEST(TransportCheck, CleanPluginPassesWithoutWarnings) {
  CheckRun r = run_check("-n 2 --only zero_byte " + quoted(TCP_PLUGIN_PATH));
  EXPECT_EQ(r.exit_status, 0) << r.output;
  EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("not checked"), std::string::npos) << r.output;
}

}  // namespace
