// A fresh directory like /tmp (world-writable, sticky) for tests of files
// smd writes where another user could have planted a link first; removed
// with its contents at the end of the test.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace testfiles {

class SharedDir {
 public:
  SharedDir() {
    char tmpl[] = "/tmp/smd-shared-test-XXXXXX";
    if (mkdtemp(tmpl)) path_ = tmpl;
    if (path_.empty() || chmod(path_.c_str(), 01777) != 0) ADD_FAILURE() << "cannot make " << tmpl;
  }
  ~SharedDir() {
    std::string cmd = "rm -rf '" + path_ + "'";
    if (system(cmd.c_str()) != 0) ADD_FAILURE() << cmd;
  }
  SharedDir(const SharedDir &) = delete;
  SharedDir &operator=(const SharedDir &) = delete;
  const std::string &path() const { return path_; }
  std::string operator/(const std::string &name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline void write_text(const std::string &path, const std::string &text) {
  std::ofstream(path) << text;
}

inline std::string read_text(const std::string &path) {
  std::stringstream ss;
  ss << std::ifstream(path).rdbuf();
  return ss.str();
}

// True when `path` itself (not what it may point to) is a regular file.
inline bool is_plain_file(const std::string &path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace testfiles
