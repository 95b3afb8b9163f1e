// Signals sent to smdrun, and what becomes of the ranks when smdrun ends.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>

#include "smdrun_process.h"

namespace smdrun_test {
namespace {

bool contains(const std::string &text, const std::string &needle) {
  return text.find(needle) != std::string::npos;
}

TEST(SmdrunSignals, SigtermIsForwardedToEveryRank) {
  SmdrunProcess smdrun({"-n", "3", helper_path(), "catch=15", "pid", "sleep=30"});
  ASSERT_TRUE(smdrun.wait_for_out("pid=", 3));
  smdrun.signal(SIGTERM);
  RunResult r = smdrun.wait();
  EXPECT_EQ(r.exit_code(), 128 + SIGTERM) << r.err;
  for (int rank = 0; rank < 3; ++rank)
    EXPECT_EQ(rank_lines(r.out, rank).back(), "caught signal 15") << r.out;
  EXPECT_TRUE(contains(r.err, "received SIGTERM; forwarding it to ranks 0,1,2")) << r.err;
  EXPECT_LT(r.seconds, 20);  // not the ranks' 30 s sleep
  for (pid_t pid : r.pids()) EXPECT_TRUE(process_gone(pid)) << pid;
}

TEST(SmdrunSignals, SecondSigintKillsRanksThatIgnoreTheFirst) {
  SmdrunProcess smdrun({"-n", "2", helper_path(), "ignore=2", "pid", "sleep=30"});
  ASSERT_TRUE(smdrun.wait_for_out("pid=", 2));
  smdrun.signal(SIGINT);
  ASSERT_TRUE(smdrun.wait_for_err("received SIGINT; forwarding", 1));
  smdrun.signal(SIGINT);
  RunResult r = smdrun.wait();
  EXPECT_EQ(r.exit_code(), 128 + SIGINT) << r.err;
  EXPECT_TRUE(contains(r.err, "received SIGINT again; killing ranks 0,1")) << r.err;
  EXPECT_LT(r.seconds, 20);  // not the ranks' 30 s sleep
  ASSERT_EQ(r.pids().size(), 2u);
  for (pid_t pid : r.pids()) EXPECT_TRUE(process_gone(pid)) << pid;
}

// A file the test creates to tell a rank to go on (the helper's file step).
std::string go_file(const std::string &test) { return unused_temp_path(test); }

// A job started with '&' from a script ignores SIGINT, and so do its ranks:
// the forwarded SIGINT changes nothing, and smdrun must go on supervising
// them as if it had not come. Rank 1 fails only after the forward.
TEST(SmdrunSignals, RankFailingAfterAnIgnoredSigintIsReportedAndEndsTheJob) {
  std::string go = go_file("ignored-sigint");
  SmdrunProcess smdrun(
      {"-n", "2", "--grace", "0.5", helper_path(), "pid", "1@file=" + go, "1@exit=3", "0@sleep=30"},
      {}, {SIGINT});
  ASSERT_TRUE(smdrun.wait_for_out("pid=", 2));
  smdrun.signal(SIGINT);
  ASSERT_TRUE(smdrun.wait_for_err("received SIGINT; forwarding it to ranks 0,1", 1));
  std::ofstream(go).put('\n');
  RunResult r = smdrun.wait();
  std::remove(go.c_str());
  EXPECT_EQ(r.exit_code(), 128 + SIGINT) << r.err;  // the first reason
  ASSERT_EQ(r.pids().size(), 2u) << r.out;
  std::string pid1 = rank_lines(r.out, 1).at(0).substr(4);
  EXPECT_TRUE(contains(r.err, "smdrun: rank 1 (pid " + pid1 + ") exited with status 3\n")) << r.err;
  EXPECT_TRUE(contains(r.err, "grace period over; sending SIGTERM to ranks 0\n")) << r.err;
  EXPECT_LT(r.seconds, 20);  // not rank 0's 30 s sleep
  for (pid_t pid : r.pids()) EXPECT_TRUE(process_gone(pid)) << pid;
}

// Rank 1 dies of the forwarded SIGINT as asked; rank 0 ignores it. That is
// not a failure of rank 1's own, but the job is ending: rank 0 gets the
// grace period, then SIGTERM.
TEST(SmdrunSignals, RankEndedByTheForwardedSignalStartsTheGraceForTheRest) {
  SmdrunProcess smdrun(
      {"-n", "2", "--grace", "0.5", helper_path(), "0@ignore=2", "pid", "sleep=30"});
  ASSERT_TRUE(smdrun.wait_for_out("pid=", 2));
  smdrun.signal(SIGINT);
  RunResult r = smdrun.wait();
  EXPECT_EQ(r.exit_code(), 128 + SIGINT) << r.err;
  EXPECT_TRUE(contains(r.err, "grace period over; sending SIGTERM to ranks 0\n")) << r.err;
  EXPECT_FALSE(contains(r.err, "was killed")) << r.err;
  EXPECT_LT(r.seconds, 20);
  for (pid_t pid : r.pids()) EXPECT_TRUE(process_gone(pid)) << pid;
}

TEST(SmdrunSignals, SigtermAfterSigintIsNamedAsSuch) {
  SmdrunProcess smdrun({"-n", "2", helper_path(), "ignore=2", "pid", "sleep=30"});
  ASSERT_TRUE(smdrun.wait_for_out("pid=", 2));
  smdrun.signal(SIGINT);
  ASSERT_TRUE(smdrun.wait_for_err("received SIGINT; forwarding", 1));
  smdrun.signal(SIGTERM);
  RunResult r = smdrun.wait();
  EXPECT_EQ(r.exit_code(), 128 + SIGINT) << r.err;
  EXPECT_TRUE(contains(r.err, "received SIGTERM after SIGINT; killing ranks 0,1\n")) << r.err;
  EXPECT_FALSE(contains(r.err, "SIGTERM again")) << r.err;
  EXPECT_LT(r.seconds, 20);
  for (pid_t pid : r.pids()) EXPECT_TRUE(process_gone(pid)) << pid;
}

// Even when smdrun itself is killed outright, no rank outlives it. The test
// becomes a subreaper so the orphaned ranks come to it and can be checked.
TEST(SmdrunSignals, RanksDieWithSmdrun) {
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  SmdrunProcess smdrun({"-n", "3", helper_path(), "ignore=15", "pid", "sleep=30"});
  ASSERT_TRUE(smdrun.wait_for_out("pid=", 3));
  smdrun.signal(SIGKILL);
  RunResult r = smdrun.wait();
  ASSERT_EQ(r.pids().size(), 3u) << r.out;
  for (pid_t pid : r.pids()) {
    int status = 0;
    pid_t done = 0;
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (done == 0 && std::chrono::steady_clock::now() < limit) {
      done = ::waitpid(pid, &status, WNOHANG);
      if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_EQ(done, pid) << "rank pid " << pid << " survived smdrun";
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    EXPECT_TRUE(process_gone(pid));
  }
}

}  // namespace
}  // namespace smdrun_test
