// Ranks that fail, hang, or never start; and what smdrun does about it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sys/stat.h>

#include "smdrun_process.h"

namespace smdrun_test {
namespace {

bool contains(const std::string &text, const std::string &needle) {
  return text.find(needle) != std::string::npos;
}

void expect_all_gone(const RunResult &r, size_t expected) {
  std::vector<pid_t> pids = r.pids();
  EXPECT_EQ(pids.size(), expected) << r.out;
  for (pid_t pid : pids) EXPECT_TRUE(process_gone(pid)) << "pid " << pid;
}

TEST(SmdrunFailure, AllRanksSucceedingExitsZero) {
  RunResult r = run_smdrun({"-n", "3", helper_path(), "pid"});
  EXPECT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_EQ(r.err, "");
  expect_all_gone(r, 3);
}

TEST(SmdrunFailure, ExitStatusOfTheFailedRankIsPropagated) {
  RunResult r = run_smdrun({"-n", "3", helper_path(), "pid", "2@exit=7"});
  EXPECT_EQ(r.exit_code(), 7);
  pid_t pid2 = std::stoi(rank_lines(r.out, 2).at(0).substr(4));
  EXPECT_TRUE(
      contains(r.err, "smdrun: rank 2 (pid " + std::to_string(pid2) + ") exited with status 7\n"))
      << r.err;
  expect_all_gone(r, 3);
}

// A file for one rank's pid, so that another can wait until smdrun has
// reaped it (see the helper's pidfile and reaped steps).
std::string pid_file(const std::string &test) { return unused_temp_path(test); }

TEST(SmdrunFailure, FirstFailureDecidesTheExitStatus) {
  // Rank 0 fails only once smdrun has reaped rank 1 (not after a sleep that
  // a slow start of rank 1 could outlast).
  std::string first = pid_file("first");
  RunResult r = run_smdrun({"-n", "2", "--grace", "60", helper_path(), "1@pidfile=" + first,
                            "1@exit=5", "0@reaped=" + first, "0@exit=4"});
  std::remove(first.c_str());
  EXPECT_EQ(r.exit_code(), 5) << r.err;
  EXPECT_TRUE(contains(r.err, "rank 1 (pid")) << r.err;
  EXPECT_TRUE(contains(r.err, "exited with status 4")) << r.err;
}

TEST(SmdrunFailure, KilledRankIsNamedAndTheOthersStoppedAfterTheGrace) {
  RunResult r = run_smdrun(
      {"-n", "3", "--grace", "0.5", helper_path(), "pid", "1@sleep=0.1", "1@kill=9", "sleep=30"});
  EXPECT_EQ(r.exit_code(), 128 + 9);
  EXPECT_TRUE(contains(r.err, ") was killed by signal 9 (SIGKILL)\n")) << r.err;
  EXPECT_TRUE(contains(r.err, "smdrun: rank 1 (pid")) << r.err;
  EXPECT_TRUE(contains(r.err, "grace period over; sending SIGTERM to ranks 0,2")) << r.err;
  // Stopped after the grace, not after the others' 30 s sleep.
  EXPECT_GE(r.seconds, 0.5);
  EXPECT_LT(r.seconds, 20);
  expect_all_gone(r, 3);
}

// The peers of a dead rank fail with their own messages inside the grace
// period; those must reach the user, with smdrun's verdict first.
TEST(SmdrunFailure, GracePeriodLetsOtherRanksReportTheirOwnErrors) {
  std::string dead = pid_file("grace");
  RunResult r =
      run_smdrun({"-n", "3", "--grace", "5", helper_path(), "pid", "1@pidfile=" + dead, "1@exit=3",
                  "0@reaped=" + dead, "0@err=lost peer 1", "0@exit=1", "sleep=30"});
  std::remove(dead.c_str());
  EXPECT_EQ(r.exit_code(), 3) << r.err;
  size_t verdict = r.err.find("rank 1 (pid");
  size_t own = r.err.find("[0] lost peer 1\n");
  size_t second = r.err.find("rank 0 (pid");
  size_t term = r.err.find("grace period over; sending SIGTERM to ranks 2\n");
  ASSERT_NE(verdict, std::string::npos) << r.err;
  ASSERT_NE(own, std::string::npos) << r.err;
  ASSERT_NE(second, std::string::npos) << r.err;
  ASSERT_NE(term, std::string::npos) << r.err;
  EXPECT_LT(verdict, own);
  EXPECT_LT(own, second);
  EXPECT_LT(second, term);
  EXPECT_GE(r.seconds, 5.0);
  expect_all_gone(r, 3);
}

TEST(SmdrunFailure, TimeoutStopsTheJobAndKillsRanksThatIgnoreSigterm) {
  RunResult r = run_smdrun(
      {"-n", "3", "--timeout", "0.5", helper_path(), "pid", "2@exit=0", "0@ignore=15", "sleep=30"});
  EXPECT_EQ(r.exit_code(), 124) << r.err;
  EXPECT_TRUE(contains(r.err, "smdrun: timeout after 0.5 s; ranks still running: 0,1\n")) << r.err;
  EXPECT_TRUE(contains(r.err, "ranks 0 still running after SIGTERM; sending SIGKILL")) << r.err;
  // Ranks stopped by smdrun are not reported as failures of their own.
  EXPECT_FALSE(contains(r.err, "exited with")) << r.err;
  EXPECT_FALSE(contains(r.err, "was killed")) << r.err;
  EXPECT_GE(r.seconds, 2.5);
  EXPECT_LT(r.seconds, 20);  // not the ranks' 30 s sleep
  expect_all_gone(r, 3);
}

TEST(SmdrunFailure, MissingProgramIsReported) {
  RunResult r = run_smdrun({"-n", "2", "smdrun-no-such-program"});
  EXPECT_EQ(r.exit_code(), 127);
  EXPECT_EQ(r.err, "smdrun: cannot run 'smdrun-no-such-program': No such file or directory\n");
  EXPECT_EQ(r.out, "");

  r = run_smdrun({"-n", "2", "/nonexistent/prog"});
  EXPECT_EQ(r.exit_code(), 127);
  EXPECT_EQ(r.err, "smdrun: cannot run '/nonexistent/prog': No such file or directory\n");
}

// A copy of a program whose library is found only through its
// $ORIGIN-relative runpath cannot start: each rank prints the loader's
// error, and smdrun adds one hint on what to set.
TEST(SmdrunFailure, MissingSharedLibraryGetsOneHint) {
  RunResult fine = run_smdrun({"-n", "1", SMDRUN_NEEDS_LIB});
  ASSERT_EQ(fine.exit_code(), 0) << fine.err;  // where it was built, it runs

  std::string copy = testing::TempDir() + "smdrun-needs-lib-" + std::to_string(::getpid());
  {
    std::ifstream in(SMDRUN_NEEDS_LIB, std::ios::binary);
    std::ofstream out(copy, std::ios::binary);
    out << in.rdbuf();
  }
  ::chmod(copy.c_str(), 0755);
  RunResult r = run_smdrun({"-n", "2", copy}, {"LD_LIBRARY_PATH"});
  std::remove(copy.c_str());
  EXPECT_EQ(r.exit_code(), 127) << r.err;
  EXPECT_TRUE(contains(r.err, "[0] ")) << r.err;
  EXPECT_TRUE(contains(r.err, "error while loading shared libraries")) << r.err;
  size_t hint = r.err.find("smdrun: hint: the dynamic loader could not find");
  ASSERT_NE(hint, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("smdrun: hint:", hint + 1), std::string::npos) << r.err;
  EXPECT_TRUE(contains(r.err, "LD_LIBRARY_PATH")) << r.err;
}

TEST(SmdrunFailure, NonExecutableProgramIsReported) {
  std::string path = testing::TempDir() + "smdrun-not-executable";
  std::ofstream(path) << "data\n";
  ::chmod(path.c_str(), 0644);
  RunResult r = run_smdrun({"-n", "1", path});
  EXPECT_EQ(r.exit_code(), 126);
  EXPECT_EQ(r.err, "smdrun: cannot run '" + path + "': Permission denied\n");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace smdrun_test
