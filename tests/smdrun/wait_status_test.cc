// Unit tests of how a rank's end is described and turned into an exit code.
#include <gtest/gtest.h>

#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

#include "wait_status.h"

namespace smdrun {
namespace {

// A real wait status, made by a child that ends as `end` says.
int status_of(void (*end)()) {
  pid_t pid = ::fork();
  if (pid == 0) end();
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

TEST(SmdrunWaitStatus, ExitAndSignalInWordsAndCodes) {
  int exited = status_of([] { ::_exit(3); });
  EXPECT_EQ(describe_wait_status(exited), "exited with status 3");
  EXPECT_EQ(exit_code_of(exited), 3);

  int killed = status_of([] {
    ::kill(::getpid(), SIGKILL);
    ::_exit(0);
  });
  EXPECT_EQ(describe_wait_status(killed), "was killed by signal 9 (SIGKILL)");
  EXPECT_EQ(exit_code_of(killed), 137);
}

TEST(SmdrunWaitStatus, SignalNames) {
  EXPECT_EQ(signal_name(SIGTERM), "SIGTERM");
  EXPECT_EQ(signal_name(SIGSEGV), "SIGSEGV");
  EXPECT_EQ(signal_name(1000), "signal 1000");
}

}  // namespace
}  // namespace smdrun
