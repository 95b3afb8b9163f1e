// Logging: SMD_DEBUG=warn|info|trace (default warn) to stderr or
// SMD_DEBUG_FILE; SMD_DEBUG_SUBSYS=init,coll,... limits which subsystems
// speak. Each line carries time, rank, pid, level and subsystem.
#pragma once

#include <cstdarg>

namespace smd {

enum class LogLevel { kNone = 0, kWarn = 1, kInfo = 2, kTrace = 3 };

// Whether a line at `level` for `subsys` would be written (cheap).
bool log_enabled(LogLevel level, const char *subsys);
void log_write(LogLevel level, const char *subsys, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void log_vwrite(LogLevel level, const char *subsys, const char *fmt, va_list args);

// The rank shown in log lines of this process (-1 until a world forms).
void log_set_rank(int rank);

// Re-read SMD_DEBUG* (for tests that change the environment).
void log_reload();

}  // namespace smd

#define SMD_LOG(level, subsys, ...)                                                      \
  do {                                                                                   \
    if (::smd::log_enabled(level, subsys)) ::smd::log_write(level, subsys, __VA_ARGS__); \
  } while (0)
#define SMD_WARN(subsys, ...) SMD_LOG(::smd::LogLevel::kWarn, subsys, __VA_ARGS__)
#define SMD_INFO(subsys, ...) SMD_LOG(::smd::LogLevel::kInfo, subsys, __VA_ARGS__)
#define SMD_TRACE(subsys, ...) SMD_LOG(::smd::LogLevel::kTrace, subsys, __VA_ARGS__)
