// smdrun's command line: what the user asked for, parsed and checked.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace smdrun {

struct Options {
  int nranks = 0;
  std::optional<double> timeout_s;  // whole-job limit; none by default
  double grace_s = 3.0;             // after a rank fails, before SIGTERM
  bool tag_output = true;
  std::string master_addr = "127.0.0.1";
  std::optional<int> master_port;    // none: pick a free one
  std::optional<int> nodes;          // fake node count for SMD_NODE_ID
  bool bind_core = false;            // --bind-to core: rank r on one CPU
  std::vector<std::string> command;  // program and its arguments
};

enum class ParseStatus { kRun, kHelp, kVersion, kUsageError };

struct ParseResult {
  ParseStatus status = ParseStatus::kUsageError;
  Options options;
  std::string error;  // for kUsageError: what was wrong, one line
};

// Parses the arguments after argv[0] (with CLI11, through
// tools/common/cli_args.h). Options end at "--" or at the first
// argument that does not start with '-'; everything after is the command.
ParseResult parse_options(const std::vector<std::string> &args);

// The full --help text, and the short synopsis printed after usage errors.
const char *help_text();
const char *usage_synopsis();

}  // namespace smdrun
