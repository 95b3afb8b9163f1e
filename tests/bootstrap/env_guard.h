// Gives a test a clean launcher environment and puts the old one back.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace smd::test {

class EnvGuard {
 public:
  // Saves and unsets every variable any launcher detection reads.
  EnvGuard();
  // Restores them all as they were.
  ~EnvGuard();
  EnvGuard(const EnvGuard &) = delete;
  EnvGuard &operator=(const EnvGuard &) = delete;

  // Sets a variable for this test (it must be one of the saved ones).
  void set(const char *name, const std::string &value);

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

}  // namespace smd::test
