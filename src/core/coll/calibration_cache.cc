// The per-boot cache of a node's calibration: later jobs on the machine
// read it instead of measuring again. "key = value" lines after a "key"
// line naming the boot, CPU model and library version they belong to.
#include <fcntl.h>
#include <sys/stat.h>
#include <smd.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/coll/calibration.h"
#include "core/util/error.h"
#include "core/util/log.h"
#include "core/util/params.h"

namespace smd {

namespace {

std::string first_line_of(const char *path, const char *prefix) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, strlen(prefix), prefix) != 0) continue;
    size_t colon = line.find(':');
    std::string v = colon == std::string::npos ? line : line.substr(colon + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    return v;
  }
  return "";
}

// Not an SMD_* variable, so not the registry's: the session's private
// runtime directory that desktop and systemd logins provide.
std::string runtime_dir() {
  const char *v = getenv("XDG_RUNTIME_DIR");
  return v && *v ? v : "";
}

}  // namespace

std::string calibration_key() {
  std::string boot = first_line_of("/proc/sys/kernel/random/boot_id", "");
  std::string cpu = first_line_of("/proc/cpuinfo", "model name");
  std::string key = format("boot=%s cpu=%s smd=%d.%d.%d", boot.c_str(), cpu.c_str(),
                           SMD_VERSION_MAJOR, SMD_VERSION_MINOR, SMD_VERSION_PATCH);
  for (char &ch : key)
    if (ch == '\n' || ch == '#') ch = ' ';
  return key;
}

std::string calibration_cache_path() {
  std::string dir = param_string("SMD_RENDEZVOUS_DIR");
  if (dir.empty() || dir == "off") dir = runtime_dir();
  if (dir.empty()) dir = "/tmp";
  return format("%s/smd-calibration-%u.txt", dir.c_str(), static_cast<unsigned>(getuid()));
}

std::optional<Calibration> read_calibration(const std::string &path, const std::string &key) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  auto ignored = [&](const char *why) {
    SMD_INFO("calibrate", "ignoring %s: %s", path.c_str(), why);
    return std::nullopt;
  };
  // In a shared /tmp anyone may have made the file first.
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || st.st_uid != getuid()) return ignored("owned by another user");
  std::string line;
  if (!std::getline(in, line) || line != "key = " + key) return ignored("made on another boot, CPU or version");
  Calibration c;
  size_t seen = 0;
  while (std::getline(in, line)) {
    size_t eq = line.find(" = ");
    if (eq == std::string::npos) return ignored("a line is not 'key = value'");
    char *end = nullptr;
    std::string value = line.substr(eq + 3);
    double v = std::strtod(value.c_str(), &end);
    // -1 is the one negative value (a staging range's "never" or "no end").
    if (end == value.c_str() || *end != '\0' || !(v >= 0 || v == -1) || std::isinf(v) ||
        !c.set(line.substr(0, eq), v))
      return ignored("a value or key is not valid");
    ++seen;
  }
  if (seen != c.entries().size() || !c.measured()) return ignored("values are missing");
  c.origin = "cached file";
  return c;
}

void write_calibration(const std::string &path, const std::string &key, const Calibration &c) {
  std::string text = "key = " + key + "\n";
  for (const auto &[k, v] : c.entries()) text += format("%s = %.17g\n", k.c_str(), v);
  std::string tmp = format("%s.%d.tmp", path.c_str(), static_cast<int>(getpid()));
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  bool ok = fd >= 0 && write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (fd >= 0) ok = close(fd) == 0 && ok;
  if (ok) ok = rename(tmp.c_str(), path.c_str()) == 0;
  if (!ok) {
    SMD_INFO("calibrate", "could not write %s (%s): later jobs will measure again", path.c_str(),
             strerror(errno));
    unlink(tmp.c_str());
  }
}

}  // namespace smd
