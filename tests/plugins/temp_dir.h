// A fresh directory under $TMPDIR (or /tmp), removed with its contents at
// the end of the scope, with helpers to put files in it.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace smd::test {

class TempDir {
 public:
  TempDir() {
    const char *base = getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/smd-test-XXXXXX";
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp " + pattern + " failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::string &path() const { return path_; }
  std::string operator/(const std::string &name) const { return path_ + "/" + name; }

  // Writes `content` to the file `name`; returns its path.
  std::string write(const std::string &name, const std::string &content) const {
    std::string p = *this / name;
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }
  // Copies `from` to the file `name`; returns its path.
  std::string copy(const std::string &from, const std::string &name) const {
    std::string p = *this / name;
    std::filesystem::copy_file(from, p, std::filesystem::copy_options::overwrite_existing);
    return p;
  }

 private:
  std::string path_;
};

}  // namespace smd::test
