// Signals sent to smdrun, and what becomes of the ranks when smdrun ends.
#include <gtest/gtest.h>

#include <csignal>
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
  EXPECT_TRUE(contains(r.err, "received SIGTERM; forwarding it to ranks 0,1,2"))
      << r.err;
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
