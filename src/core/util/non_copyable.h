// A base for classes that own something for their lifetime (a scope that
// restores a setting, a handle that frees): copying one would restore or
// free twice, so neither copy nor assignment exists.
#pragma once

namespace smd {

class NonCopyable {
 protected:
  NonCopyable() = default;
  ~NonCopyable() = default;

 public:
  NonCopyable(const NonCopyable &) = delete;
  NonCopyable &operator=(const NonCopyable &) = delete;
};

}  // namespace smd
