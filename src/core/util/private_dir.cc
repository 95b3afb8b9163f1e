#include "core/util/private_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/util/error.h"
#include "core/util/safe_file.h"

namespace smd {

std::string make_private_dirs(const std::string &dir) {
  for (size_t at = 0; at != std::string::npos;) {
    at = dir.find('/', at + 1);
    std::string part = dir.substr(0, at);
    if (part.empty() || part == "/") continue;
    if (mkdir(part.c_str(), 0700) != 0 && errno != EEXIST)
      return format("cannot create %s: %s", part.c_str(), strerror(errno));
  }
  return "";
}

std::string private_dir_problem(const std::string &dir) {
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) return format("%s: %s", dir.c_str(), strerror(errno));
  if (!S_ISDIR(st.st_mode)) return format("%s is not a directory (a link?)", dir.c_str());
  return ownership_problem(dir, st, S_IRWXG | S_IRWXO);
}

}  // namespace smd
