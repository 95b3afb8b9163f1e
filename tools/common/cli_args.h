// The tools' command lines are read with CLI11 (Debian: libcli11-dev,
// header-only). These helpers give every tool the same rules on top of it:
// an option's value is checked the moment it is read, so the first mistake
// on the line is the one reported and the last of a repeated option wins;
// "--opt=" is an empty value, not "take the next argument"; and a usage
// error is one line the tool prints with its synopsis.
#pragma once

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace smdtools {

// A usage error, already worded for the user.
inline CLI::ValidationError usage_problem(std::string message) {
  return CLI::ValidationError(std::move(message));
}

// CLI11 2.1 reads "--opt=" as "--opt" and would take the following argument
// as its value. Such a token gets a NUL appended (no argv string holds one),
// so CLI11 sees a value; value_of() takes it off again.
constexpr char kEmptyValueMark = '\0';

inline std::vector<std::string> mark_empty_values(std::vector<std::string> args) {
  for (std::string &arg : args)
    if (arg.size() > 3 && arg.compare(0, 2, "--") == 0 && arg.back() == '=')
      arg.push_back(kEmptyValueMark);
  return args;
}

inline std::string value_of(std::string token) {
  if (!token.empty() && token.back() == kEmptyValueMark) token.pop_back();
  return token;
}

// Parses `args` (argv without argv[0]) with the empty-value rule above.
// CLI11's parse(vector&) wants the arguments last first.
inline void parse_args(CLI::App &app, const std::vector<std::string> &args) {
  std::vector<std::string> reversed = mark_empty_values(args);
  std::reverse(reversed.begin(), reversed.end());
  app.parse(reversed);
}

// The unconsumed arguments with their original text.
inline std::vector<std::string> remaining_args(const CLI::App &app) {
  std::vector<std::string> rest = app.remaining();
  for (std::string &token : rest) token = value_of(std::move(token));
  return rest;
}

// The whole of `text` as a decimal int, or nothing.
inline std::optional<int> to_int(const std::string &text) {
  int value = 0;
  const char *end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

// The whole of `text` as a finite number, or nothing.
inline std::optional<double> to_number(const std::string &text) {
  if (text.empty()) return std::nullopt;
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (*end != '\0' || !std::isfinite(value)) return std::nullopt;
  return value;
}

// An option taking one value, handed to `apply` as soon as it is read
// (apply throws usage_problem() to reject it).
inline CLI::Option *add_value_option(CLI::App &app, const std::string &name,
                                     std::function<void(const std::string &)> apply) {
  return app
      .add_option_function<std::string>(
          name, [apply = std::move(apply)](const std::string &value) { apply(value_of(value)); })
      ->trigger_on_parse()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

// A flag without a value, acted on as soon as it is read.
inline CLI::Option *add_plain_flag(CLI::App &app, const std::string &name,
                                   std::function<void()> apply) {
  return app.add_flag_callback(name, std::move(apply))
      ->trigger_on_parse()
      ->disable_flag_override()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

// The option `name` of `app` or of a command of it that was given.
inline const CLI::Option *find_option(const CLI::App &app, const std::string &name) {
  if (const CLI::Option *opt = app.get_option_no_throw(name)) return opt;
  for (const CLI::App *sub : app.get_subcommands())
    if (const CLI::Option *opt = find_option(*sub, name)) return opt;
  return nullptr;
}

// What to tell the user about an error CLI11 itself raised while parsing
// `args`: a flag given a value ("--json=1"), or a value missing at the end of
// the line, named with the option as typed; anything else in CLI11's words.
inline std::string describe_cli_error(
    const CLI::App &app, const CLI::ParseError &error, const std::vector<std::string> &args,
    const std::function<std::string(const std::string &)> &missing_value) {
  if (!dynamic_cast<const CLI::ArgumentMismatch *>(&error)) return error.what();
  for (const std::string &arg : args) {
    size_t eq = arg.find('=');
    if (arg.rfind('-', 0) != 0 || eq == std::string::npos) continue;
    const CLI::Option *opt = find_option(app, arg.substr(0, eq));
    if (opt && opt->get_expected_max() == 0)
      return "option '" + arg.substr(0, eq) + "' takes no value";
  }
  if (!args.empty() && args.back().rfind('-', 0) == 0) return missing_value(args.back());
  return error.what();
}

}  // namespace smdtools
