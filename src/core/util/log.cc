#include "core/util/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <optional>
#include <string>

#include "core/util/error.h"
#include "core/util/params.h"
#include "core/util/safe_file.h"

namespace smd {
namespace {

struct LogState {
  std::once_flag once;
  // Set once loaded: then log_enabled skips call_once, which costs two
  // thread-local accesses per call (on every collective's path).
  std::atomic<bool> loaded{false};
  std::atomic<int> level{static_cast<int>(LogLevel::kWarn)};
  std::string subsys_filter;  // comma-separated, empty = all
  FILE *out = stderr;
  std::mutex mu;
};

LogState &state() {
  static LogState *s = new LogState();  // never destroyed: logs may run at exit
  return *s;
}

std::atomic<int> g_rank{-1};

void load(LogState &s) {
  // Through the registry, like every SMD_* variable (params.cc logs
  // nothing, so this cannot recurse).
  std::optional<std::string> lvl_value = param_env("SMD_DEBUG");
  const char *lvl = lvl_value ? lvl_value->c_str() : nullptr;
  LogLevel level = LogLevel::kWarn;
  if (lvl && *lvl) {
    if (!strcasecmp(lvl, "none") || !strcasecmp(lvl, "off")) level = LogLevel::kNone;
    else if (!strcasecmp(lvl, "warn")) level = LogLevel::kWarn;
    else if (!strcasecmp(lvl, "info")) level = LogLevel::kInfo;
    else if (!strcasecmp(lvl, "trace")) level = LogLevel::kTrace;
  }
  s.level.store(static_cast<int>(level));
  s.subsys_filter = param_env("SMD_DEBUG_SUBSYS").value_or("");
  std::optional<std::string> file_value = param_env("SMD_DEBUG_FILE");
  const char *file = file_value ? file_value->c_str() : nullptr;
  if (s.out != stderr && s.out) fclose(s.out);
  s.out = stderr;
  if (file && *file) {
    // %h = hostname, %p = pid, %r = rank (rank known later: use pid)
    std::string path;
    for (const char *p = file; *p; ++p) {
      if (*p == '%' && p[1] == 'p') {
        path += std::to_string(getpid());
        ++p;
      } else if (*p == '%' && p[1] == 'h') {
        char host[256] = {0};
        gethostname(host, sizeof host - 1);
        path += host;
        ++p;
      } else path += *p;
    }
    // Not through a link or into another user's file: in a shared
    // directory someone else may have planted either at this name.
    std::string why;
    int fd = open_own_file_to_append(path, &why);
    FILE *f = fd >= 0 ? fdopen(fd, "a") : nullptr;
    if (f) {
      setvbuf(f, nullptr, _IOLBF, 0);
      s.out = f;
    } else {
      if (fd >= 0) close(fd);
      else if (level != LogLevel::kNone)
        fprintf(stderr, "smd pid %d WARN  log: SMD_DEBUG_FILE: %s; logging to stderr instead\n",
                static_cast<int>(getpid()), why.c_str());
    }
  }
}

LogState &ready() {
  LogState &s = state();
  if (s.loaded.load(std::memory_order_acquire)) return s;
  std::call_once(s.once, [&] {
    load(s);
    s.loaded.store(true, std::memory_order_release);
  });
  return s;
}

bool subsys_allowed(const std::string &filter, const char *subsys) {
  if (filter.empty()) return true;
  size_t n = strlen(subsys);
  size_t pos = 0;
  while (pos <= filter.size()) {
    size_t end = filter.find(',', pos);
    if (end == std::string::npos) end = filter.size();
    if (end - pos == n && filter.compare(pos, n, subsys) == 0) return true;
    pos = end + 1;
  }
  return false;
}

const char *level_name(LogLevel l) {
  switch (l) {
    case LogLevel::kWarn: return "WARN";
    case LogLevel::kInfo: return "INFO";
    case LogLevel::kTrace: return "TRACE";
    default: return "";
  }
}

}  // namespace

bool log_enabled(LogLevel level, const char *subsys) {
  LogState &s = ready();
  if (static_cast<int>(level) > s.level.load(std::memory_order_relaxed)) return false;
  return level == LogLevel::kWarn || subsys_allowed(s.subsys_filter, subsys);
}

void log_vwrite(LogLevel level, const char *subsys, const char *fmt, va_list args) {
  LogState &s = ready();
  std::string msg = vformat(fmt, args);
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  localtime_r(&ts.tv_sec, &tm);
  char when[32];
  snprintf(when, sizeof when, "%02d:%02d:%02d.%06ld", tm.tm_hour, tm.tm_min, tm.tm_sec,
           ts.tv_nsec / 1000);
  std::lock_guard<std::mutex> lock(s.mu);
  int rank = g_rank.load(std::memory_order_relaxed);
  if (rank >= 0)
    fprintf(s.out, "smd %s rank %d pid %d %-5s %s: %s\n", when, rank, getpid(), level_name(level),
            subsys, msg.c_str());
  else
    fprintf(s.out, "smd %s pid %d %-5s %s: %s\n", when, getpid(), level_name(level), subsys,
            msg.c_str());
  fflush(s.out);
}

void log_write(LogLevel level, const char *subsys, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  log_vwrite(level, subsys, fmt, args);
  va_end(args);
}

void log_set_rank(int rank) { g_rank.store(rank); }

void log_reload() {
  LogState &s = ready();
  std::lock_guard<std::mutex> lock(s.mu);
  load(s);
}

}  // namespace smd
