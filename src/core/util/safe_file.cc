#include "core/util/safe_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/util/error.h"

namespace smd {

namespace {

std::string open_error(const std::string &path, int err) {
  if (err == ELOOP) return format("%s is a symbolic link: refusing to follow it", path.c_str());
  return format("%s: %s", path.c_str(), strerror(err));
}

// What is wrong with the open file `st` for a caller wanting a regular
// file (of this user, that others cannot write, with own_only); "" when
// nothing is.
std::string regular_file_problem(const std::string &path, const struct stat &st, bool own_only) {
  if (!S_ISREG(st.st_mode))
    return format("%s is not a regular file (a FIFO, device or directory)", path.c_str());
  return own_only ? ownership_problem(path, st, S_IWGRP | S_IWOTH) : "";
}

}  // namespace

std::string ownership_problem(const std::string &path, const struct stat &st, mode_t forbidden) {
  if (st.st_uid != geteuid())
    return format("%s belongs to uid %u, not this user (%u)", path.c_str(),
                  static_cast<unsigned>(st.st_uid), static_cast<unsigned>(geteuid()));
  if (st.st_mode & forbidden)
    return format("%s has mode %03o: other users may %s it", path.c_str(),
                  static_cast<unsigned>(st.st_mode & 0777),
                  (forbidden & (S_IRGRP | S_IROTH)) ? "enter" : "write");
  return "";
}

std::string unguessable_temp_name(const std::string &path) {
  unsigned char bytes[8] = {};
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail_errno("cannot read random bytes for a temporary file name");
    got += static_cast<size_t>(n);
  }
  std::string name = path + ".tmp-";
  for (unsigned char b : bytes) name += format("%02x", b);
  return name;
}

int create_new_file(const char *path, mode_t mode) {
  return ::open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
}

int move_into_place(const char *tmp, const char *path) {
  if (::rename(tmp, path) == 0) return 0;
  int err = errno;
  ::unlink(tmp);
  errno = err;
  return -1;
}

int replace_with_new_file(const std::string &path, mode_t mode, std::string *why) {
  std::string tmp = unguessable_temp_name(path);
  int fd = create_new_file(tmp.c_str(), mode);
  if (fd < 0) {
    *why = open_error(tmp, errno);
    return -1;
  }
  if (move_into_place(tmp.c_str(), path.c_str()) != 0) {
    *why = format("cannot put a new file at %s: %s", path.c_str(), strerror(errno));
    ::close(fd);
    return -1;
  }
  return fd;
}

int open_own_file_to_append(const std::string &path, std::string *why) {
  // O_NONBLOCK: a FIFO without a reader fails at once instead of waiting.
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK,
                  0600);
  if (fd < 0) {
    *why = open_error(path, errno);
    return -1;
  }
  struct stat st {};
  // This user's file, whatever its mode (a log made under umask 002 is
  // group-writable): appending to it writes nothing of anyone else's.
  std::string problem =
      fstat(fd, &st) != 0 ? open_error(path, errno) : regular_file_problem(path, st, false);
  if (problem.empty()) problem = ownership_problem(path, st, 0);
  if (problem.empty() && st.st_nlink != 1)
    problem = format("%s has %u names (hard links): refusing to append to it", path.c_str(),
                     static_cast<unsigned>(st.st_nlink));
  if (!problem.empty()) {
    ::close(fd);
    *why = problem;
    return -1;
  }
  return fd;
}

std::optional<std::string> read_bounded_file(const std::string &path, const FileRules &rules,
                                             std::string *why) {
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (rules.follow_links ? 0 : O_NOFOLLOW);
  int fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    int err = errno;
    *why = open_error(path, err);
    errno = err;
    return std::nullopt;
  }
  struct stat st {};
  std::string problem = fstat(fd, &st) != 0 ? open_error(path, errno)
                                            : regular_file_problem(path, st, rules.own_only);
  if (problem.empty() && static_cast<uint64_t>(st.st_size) > rules.max_bytes)
    problem = format("%s has %lld bytes, more than the %zu allowed", path.c_str(),
                     static_cast<long long>(st.st_size), rules.max_bytes);
  std::string text;
  if (problem.empty()) {
    // The file may grow while it is read: never more than the bound.
    char buf[4096];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        problem = open_error(path, errno);
        break;
      }
      if (n == 0) break;
      text.append(buf, static_cast<size_t>(n));
      if (text.size() > rules.max_bytes) {
        problem = format("%s grew past the %zu bytes allowed while it was read", path.c_str(),
                         rules.max_bytes);
        break;
      }
    }
  }
  ::close(fd);
  if (!problem.empty()) {
    *why = problem;
    errno = EINVAL;  // opened, then refused
    return std::nullopt;
  }
  return text;
}

}  // namespace smd
