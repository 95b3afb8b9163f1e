// Turns one rank stream's bytes into whole lines prefixed with "[rank] ",
// so lines from different ranks never mix mid-line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace smdrun {

class LineTagger {
 public:
  // Most bytes of a line held back waiting for its newline; beyond that
  // they go out as a tagged piece of their own, so a rank that never
  // writes a newline cannot grow smdrun. (A longer line that arrives whole
  // in one read stays whole: reads are bounded already.)
  static constexpr size_t kMaxLine = 1 << 20;

  // An empty prefix passes bytes through untouched and holds nothing back.
  explicit LineTagger(std::string prefix, size_t max_line = kMaxLine)
      : prefix_(std::move(prefix)), max_line_(max_line) {}

  // Appends to `out` every line `data` completes, each with the prefix.
  void feed(std::string_view data, std::string &out);

  // End of stream: appends a held-back partial line, completed with '\n'.
  void finish(std::string &out);

 private:
  void emit(std::string_view tail, std::string &out);

  std::string prefix_;
  size_t max_line_;
  std::string partial_;
};

}  // namespace smdrun
