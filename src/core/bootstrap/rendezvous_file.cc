#include "core/bootstrap/rendezvous_file.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "core/util/error.h"
#include "core/util/fnv1a.h"
#include "core/util/log.h"
#include "core/util/params.h"
#include "core/util/private_dir.h"
#include "core/util/safe_file.h"

namespace smd {
namespace {

constexpr int64_t kPollMs = 50;
constexpr char kHeader[] = "smd-rendezvous 1";

// The directory must be ours and closed to others: a note in a directory
// another user can write could be replaced by theirs.
void check_private_dir(const std::string &dir) {
  std::string problem = private_dir_problem(dir);
  if (!problem.empty())
    fail(SMD_ERR_BOOTSTRAP,
         "rendezvous directory %s: refusing to exchange the job token through it, where others "
         "could read or plant it (chmod 700 it, or set SMD_RENDEZVOUS_DIR or SMD_JOB_TOKEN)",
         problem.c_str());
}

std::optional<RendezvousNote> parse(const std::string &text) {
  std::istringstream in(text);
  std::string line, key;
  if (!std::getline(in, line) || line != kHeader) return std::nullopt;
  RendezvousNote note;
  bool whole = false;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    fields >> key;
    if (key == "token") fields >> note.token;
    else if (key == "host") fields >> note.host;
    else if (key == "port") fields >> note.port;
    else if (key == "end") whole = true;
  }
  if (!whole || note.token.empty() || note.host.empty() || note.port < 1 || note.port > 65535)
    return std::nullopt;
  return note;
}

}  // namespace

std::string random_token() {
  unsigned char bytes[16];
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail_errno("cannot open /dev/urandom for the job token");
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = read(fd, bytes + got, sizeof bytes - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      fail(SMD_ERR_SYSTEM, "cannot read /dev/urandom for the job token");
    }
    got += static_cast<size_t>(n);
  }
  close(fd);
  char hex[2 * sizeof bytes + 1];
  for (size_t i = 0; i < sizeof bytes; ++i) snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
  return hex;
}

// From the password database, like every host of a cluster sees it.
std::string home_dir() {
  passwd pw{}, *found = nullptr;
  char buf[4096];
  if (getpwuid_r(geteuid(), &pw, buf, sizeof buf, &found) != 0 || !found || !pw.pw_dir) return "";
  return pw.pw_dir;
}

std::string rendezvous_dir(bool single_host) {
  std::string dir = param_string("SMD_RENDEZVOUS_DIR");
  if (dir.empty()) {
    std::string home = home_dir();
    if (single_host || home.empty() || home == "/")
      dir = format("/tmp/smd-%u", static_cast<unsigned>(geteuid()));
    else dir = home + "/.smd/rendezvous";
  }
  if (dir[0] != '/')
    fail(SMD_ERR_INVALID_ARGUMENT, "SMD_RENDEZVOUS_DIR=%s is not an absolute path", dir.c_str());
  std::string made = make_private_dirs(dir);
  if (!made.empty()) fail(SMD_ERR_BOOTSTRAP, "the rendezvous directory: %s", made.c_str());
  check_private_dir(dir);
  return dir;
}

std::string rendezvous_note_path(const std::string &dir, const std::string &job_key,
                                 uint32_t epoch) {
  // FNV-1a, 64 bits: the same on every rank and build.
  uint64_t h = fnv1a64(job_key);
  return format("%s/job-%016llx-%u", dir.c_str(), static_cast<unsigned long long>(h), epoch);
}

void write_rendezvous_note(const std::string &path, const RendezvousNote &note) {
  std::string tmp = unguessable_temp_name(path);
  int fd = create_new_file(tmp.c_str(), 0600);
  if (fd < 0)
    fail(SMD_ERR_BOOTSTRAP, "cannot write the rendezvous note %s: %s", tmp.c_str(),
         strerror(errno));
  std::string text = format("%s\ntoken %s\nhost %s\nport %d\nend\n", kHeader, note.token.c_str(),
                            note.host.c_str(), note.port);
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ok = fsync(fd) == 0 && ok;
  close(fd);
  if (!ok) unlink(tmp.c_str());
  if (!ok || move_into_place(tmp.c_str(), path.c_str()) != 0)
    fail(SMD_ERR_BOOTSTRAP, "cannot write the rendezvous note %s: %s", path.c_str(),
         strerror(errno));
}

RendezvousNote read_rendezvous_note(const std::string &path, Deadline deadline) {
  for (;;) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0) {
      struct stat st {};
      if (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077)) {
        close(fd);
        fail(SMD_ERR_BOOTSTRAP, "rendezvous note %s is not private to this user: refusing it",
             path.c_str());
      }
      std::string text;
      char buf[512];
      ssize_t n;
      while ((n = read(fd, buf, sizeof buf)) > 0 && text.size() < 4096) text.append(buf, n);
      close(fd);
      if (auto note = parse(text)) return *note;
    }
    if (deadline.expired())
      fail(SMD_ERR_TIMEOUT,
           "rank 0 did not leave the job token in %s in time: is that directory shared "
           "with rank 0's host (set SMD_RENDEZVOUS_DIR to one that is), or give every rank "
           "the same secret in SMD_JOB_TOKEN",
           path.c_str());
    usleep(static_cast<useconds_t>(
        std::min(kPollMs, std::max<int64_t>(deadline.remaining_ms(), 1)) * 1000));
  }
}

void remove_rendezvous_note(const std::string &path) {
  if (unlink(path.c_str()) != 0 && errno != ENOENT)
    SMD_TRACE("store", "cannot remove the rendezvous note %s: %s", path.c_str(), strerror(errno));
}

}  // namespace smd
