#include "core/util/error.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace smd {

std::string vformat(const char *fmt, va_list args) {
  va_list copy;
  va_copy(copy, args);
  char small[256];
  int n = std::vsnprintf(small, sizeof small, fmt, copy);
  va_end(copy);
  if (n < 0) return fmt;
  if (static_cast<size_t>(n) < sizeof small) return std::string(small, n);
  std::vector<char> big(static_cast<size_t>(n) + 1);
  std::vsnprintf(big.data(), big.size(), fmt, args);
  return std::string(big.data(), n);
}

std::string format(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string s = vformat(fmt, args);
  va_end(args);
  return s;
}

void fail(smd_result_t code, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string s = vformat(fmt, args);
  va_end(args);
  throw Error(code, std::move(s));
}

void fail_errno(const char *fmt, ...) {
  int err = errno;
  va_list args;
  va_start(args, fmt);
  std::string s = vformat(fmt, args);
  va_end(args);
  throw Error(SMD_ERR_SYSTEM, format("%s: %s", s.c_str(), std::strerror(err)));
}

namespace {
thread_local std::string tls_last_error;
}

constinit thread_local bool tls_last_error_set = false;

void set_last_error(const std::string &message) {
  tls_last_error = message;
  tls_last_error_set = !message.empty();
}
void clear_last_error_text() {
  tls_last_error.clear();
  tls_last_error_set = false;
}
const char *last_error() { return tls_last_error.c_str(); }

}  // namespace smd
