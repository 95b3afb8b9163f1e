// Unit tests of smdrun's command-line parser.
#include <gtest/gtest.h>

#include "options.h"

namespace smdrun {
namespace {

ParseResult parse(std::vector<std::string> args) { return parse_options(args); }

TEST(SmdrunOptions, DefaultsAndCommand) {
  ParseResult r = parse({"-n", "4", "prog", "--flag", "x"});
  ASSERT_EQ(r.status, ParseStatus::kRun) << r.error;
  EXPECT_EQ(r.options.nranks, 4);
  EXPECT_FALSE(r.options.timeout_s);
  EXPECT_EQ(r.options.grace_s, 3.0);
  EXPECT_TRUE(r.options.tag_output);
  EXPECT_EQ(r.options.master_addr, "127.0.0.1");
  EXPECT_FALSE(r.options.master_port);
  EXPECT_FALSE(r.options.nodes);
  EXPECT_EQ(r.options.command, (std::vector<std::string>{"prog", "--flag", "x"}));
}

TEST(SmdrunOptions, BindTo) {
  EXPECT_FALSE(parse({"-n", "2", "p"}).options.bind_core);
  ParseResult r = parse({"-n", "2", "--bind-to", "core", "p"});
  ASSERT_EQ(r.status, ParseStatus::kRun) << r.error;
  EXPECT_TRUE(r.options.bind_core);
  r = parse({"-n", "2", "--bind-to=none", "p"});
  ASSERT_EQ(r.status, ParseStatus::kRun) << r.error;
  EXPECT_FALSE(r.options.bind_core);
  r = parse({"-n", "2", "--bind-to", "socket", "p"});
  EXPECT_EQ(r.status, ParseStatus::kUsageError);
  EXPECT_EQ(r.error, "option '--bind-to' needs core or none, got 'socket'");
}

TEST(SmdrunOptions, EverySpellingOfEveryOption) {
  ParseResult r =
      parse({"-n8", "--timeout=1.5", "--grace", "0", "--no-tag-output", "--master-addr=10.0.0.1",
             "--master-port", "1234", "--nodes=2", "--", "-prog"});
  ASSERT_EQ(r.status, ParseStatus::kRun) << r.error;
  EXPECT_EQ(r.options.nranks, 8);
  EXPECT_EQ(r.options.timeout_s, 1.5);
  EXPECT_EQ(r.options.grace_s, 0.0);
  EXPECT_FALSE(r.options.tag_output);
  EXPECT_EQ(r.options.master_addr, "10.0.0.1");
  EXPECT_EQ(r.options.master_port, 1234);
  EXPECT_EQ(r.options.nodes, 2);
  EXPECT_EQ(r.options.command, std::vector<std::string>{"-prog"});

  r = parse({"--nranks=2", "--no-tag-output", "--tag-output", "p"});
  ASSERT_EQ(r.status, ParseStatus::kRun) << r.error;
  EXPECT_EQ(r.options.nranks, 2);
  EXPECT_TRUE(r.options.tag_output);
}

TEST(SmdrunOptions, TheCommandPassesThroughUntouched) {
  ParseResult r = parse({"-n", "2", "--", "--", "-n", "x"});
  ASSERT_EQ(r.status, ParseStatus::kRun) << r.error;
  EXPECT_EQ(r.options.command, (std::vector<std::string>{"--", "-n", "x"}));
  r = parse({"-n2", "-", "--nranks=", "--help"});
  ASSERT_EQ(r.status, ParseStatus::kRun) << r.error;
  EXPECT_EQ(r.options.nranks, 2);
  EXPECT_EQ(r.options.command, (std::vector<std::string>{"-", "--nranks=", "--help"}));
}

TEST(SmdrunOptions, ZeroTimeoutMeansNoLimit) {
  ParseResult r = parse({"-n", "1", "--timeout", "5", "--timeout", "0", "p"});
  ASSERT_EQ(r.status, ParseStatus::kRun);
  EXPECT_FALSE(r.options.timeout_s);
}

TEST(SmdrunOptions, HelpWinsOverEverythingBeforeTheProgram) {
  EXPECT_EQ(parse({"-h"}).status, ParseStatus::kHelp);
  EXPECT_EQ(parse({"-n", "2", "--help", "p"}).status, ParseStatus::kHelp);
  EXPECT_EQ(parse({"-n", "2", "p", "--help"}).status, ParseStatus::kRun);
}

TEST(SmdrunOptions, ErrorsNameTheProblem) {
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  const Case cases[] = {
      {{"p"}, "-n N is required (the number of ranks)"},
      {{"-n", "-3", "p"}, "option '-n' needs a rank count of at least 1, got '-3'"},
      {{"-n", "4x", "p"}, "option '-n' needs a rank count of at least 1, got '4x'"},
      {{"-n", "2"}, "no program to run"},
      {{"-n"}, "option '-n' needs a value"},
      {{"-n", "2", "--timeout", "soon", "p"},
       "option '--timeout' needs a number of seconds >= 0, got 'soon'"},
      {{"-n", "2", "--timeout", "inf", "p"},
       "option '--timeout' needs a number of seconds >= 0, got 'inf'"},
      {{"-n", "2", "--master-port=0", "p"},
       "option '--master-port' needs a port in 1..65535, got '0'"},
      {{"-n", "2", "--nodes", "0", "p"},
       "option '--nodes' needs a node count of at least 1, got '0'"},
      {{"-n", "2", "--nodes", "4", "p"},
       "--nodes 4 with 2 ranks leaves nodes empty (ranks go in blocks of 1, filling 2 "
       "nodes): give at most 2 nodes or more ranks"},
      {{"-n", "5", "--nodes=4", "p"},
       "--nodes 4 with 5 ranks leaves nodes empty (ranks go in blocks of 2, filling 3 "
       "nodes): give at most 3 nodes or more ranks"},
      {{"-n", "2", "--master-addr=", "p"}, "option '--master-addr' needs an address, got ''"},
      {{"-n", "2", "--timeoutx=3", "p"}, "unknown option '--timeoutx=3'"},
      {{"-x", "p"}, "unknown option '-x'"},
      {{"--nranks=0", "p"}, "option '--nranks' needs a rank count of at least 1, got '0'"},
      {{"-n", "2", "--nodes=", "p"}, "option '--nodes' needs a node count of at least 1, got ''"},
      {{"-n", "2", "--master-port"}, "option '--master-port' needs a value"},
      {{"-n", "2", "--tag-output=yes", "p"}, "option '--tag-output' takes no value"},
  };
  for (const Case &c : cases) {
    ParseResult r = parse(c.args);
    EXPECT_EQ(r.status, ParseStatus::kUsageError) << c.error;
    EXPECT_EQ(r.error, c.error);
  }
}

}  // namespace
}  // namespace smdrun
