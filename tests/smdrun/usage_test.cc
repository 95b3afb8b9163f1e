// smdrun's command line as a user meets it: help and usage errors.
#include <gtest/gtest.h>

#include "smdrun_process.h"

namespace smdrun_test {
namespace {

bool contains(const std::string &text, const std::string &needle) {
  return text.find(needle) != std::string::npos;
}

void expect_usage_error(const std::vector<std::string> &args, const std::string &message) {
  RunResult r = run_smdrun(args);
  EXPECT_EQ(r.exit_code(), 2) << r.err;
  EXPECT_TRUE(contains(r.err, "smdrun: " + message + "\n")) << r.err;
  EXPECT_TRUE(contains(r.err, "Usage: smdrun -n N")) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(SmdrunUsage, HelpDocumentsEveryOption) {
  RunResult r = run_smdrun({"--help"});
  EXPECT_EQ(r.exit_code(), 0);
  for (const char *option :
       {"-n", "--timeout", "--grace", "--tag-output", "--no-tag-output", "--master-addr",
        "--master-port", "--nodes", "SMD_JOB_TOKEN", "SMD_NODE_ID", "124"})
    EXPECT_TRUE(contains(r.out, option)) << option;
}

TEST(SmdrunUsage, BadUsageExitsTwoWithAReason) {
  std::string helper = helper_path();
  expect_usage_error({helper}, "-n N is required (the number of ranks)");
  expect_usage_error({"-n", "0", helper}, "option '-n' needs a rank count of at least 1, got '0'");
  expect_usage_error({"-n", "two", helper},
                     "option '-n' needs a rank count of at least 1, got 'two'");
  expect_usage_error({"-n", "2"}, "no program to run");
  expect_usage_error({"-n", "2", "--"}, "no program to run");
  expect_usage_error({"-n", "2", "--frobnicate", helper}, "unknown option '--frobnicate'");
  expect_usage_error({"-n", "2", "--timeout"}, "option '--timeout' needs a value");
  expect_usage_error({"-n", "2", "--grace", "-1", helper},
                     "option '--grace' needs a number of seconds >= 0, got '-1'");
  expect_usage_error({"-n", "2", "--master-port", "70000", helper},
                     "option '--master-port' needs a port in 1..65535, got '70000'");
}

TEST(SmdrunUsage, OptionsEndAtTheProgram) {
  // "-n" after the program belongs to the program.
  RunResult r = run_smdrun({"-n1", "--", "sh", "-c", "echo \"got $*\"", "sh", "-n", "5"});
  EXPECT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_EQ(r.out, "[0] got -n 5\n");
}

}  // namespace
}  // namespace smdrun_test
