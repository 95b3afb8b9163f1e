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
#include <optional>
#include <sstream>

#include "core/coll/calibrate/calibration.h"
#include "core/util/error.h"
#include "core/util/log.h"
#include "core/util/params.h"
#include "core/util/safe_file.h"

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
  // The file is this user's own (in a shared /tmp anyone may have made it
  // first), never a link, and small: checked on the open file.
  FileRules rules;
  rules.max_bytes = 64 * 1024;
  rules.follow_links = false;
  rules.own_only = true;
  std::string why;
  std::optional<std::string> text = read_bounded_file(path, rules, &why);
  if (!text) {
    if (errno == ENOENT) return std::nullopt;  // none yet: measured, then written
    SMD_WARN("calibrate", "ignoring the calibration cache: %s (measuring again)", why.c_str());
    return std::nullopt;
  }
  auto stale = [&](const char *what) {
    SMD_INFO("calibrate", "ignoring %s: %s", path.c_str(), what);
    return std::nullopt;
  };
  // Values no measurement gives: someone edited the file.
  auto refused = [&](const std::string &what) {
    SMD_WARN("calibrate", "ignoring the calibration cache %s: %s (measuring again)", path.c_str(),
             what.c_str());
    return std::nullopt;
  };
  std::istringstream in(*text);
  std::string line;
  if (!std::getline(in, line) || line != "key = " + key)
    return stale("made on another boot, CPU or version");
  Calibration c;
  size_t seen = 0;
  while (std::getline(in, line)) {
    size_t eq = line.find(" = ");
    if (eq == std::string::npos) return refused("a line is not 'key = value'");
    char *end = nullptr;
    std::string name = line.substr(0, eq), value = line.substr(eq + 3);
    double v = std::strtod(value.c_str(), &end);
    if (end == value.c_str() || *end != '\0' || !std::isfinite(v))
      return refused(format("%s = '%s' is not a number", name.c_str(), value.c_str()));
    std::string problem = Calibration::range_problem(name, v);
    if (!problem.empty()) return refused(problem);
    c.set(name, v);
    ++seen;
  }
  if (seen != c.entries().size() || !c.measured()) return refused("values are missing");
  c.origin = "cached file";
  return c;
}

void write_calibration(const std::string &path, const std::string &key, const Calibration &c) {
  std::string text = "key = " + key + "\n";
  for (const auto &[k, v] : c.entries()) text += format("%s = %.17g\n", k.c_str(), v);
  std::string tmp = unguessable_temp_name(path);
  int fd = create_new_file(tmp.c_str(), 0600);
  bool ok = fd >= 0 && write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (fd >= 0) ok = close(fd) == 0 && ok;
  if (!ok && fd >= 0) unlink(tmp.c_str());
  if (!ok || move_into_place(tmp.c_str(), path.c_str()) != 0)
    SMD_INFO("calibrate", "could not write %s (%s): later jobs will measure again", path.c_str(),
             strerror(errno));
}

}  // namespace smd
