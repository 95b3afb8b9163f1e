// Sets (or unsets) one environment variable for a scope and restores it.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace smd::test {

class ScopedEnv {
 public:
  // value == nullopt unsets the variable.
  ScopedEnv(const char *name, const std::optional<std::string> &value) : name_(name) {
    if (const char *old = getenv(name)) old_ = old;
    if (value) setenv(name, value->c_str(), 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_.c_str(), old_->c_str(), 1);
    else unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace smd::test
