// Errors inside the core: an exception carrying an smd_result_t and a
// message. Thrown anywhere in the core, caught only at the C ABI boundary
// (src/core/api), which stores the message as the thread's last error.
#pragma once

#include <smd.h>

#include <cstdarg>
#include <exception>
#include <string>

namespace smd {

class Error : public std::exception {
 public:
  Error(smd_result_t code, std::string message) : code_(code), message_(std::move(message)) {}
  smd_result_t code() const noexcept { return code_; }
  const char *what() const noexcept override { return message_.c_str(); }
  const std::string &message() const noexcept { return message_; }

 private:
  smd_result_t code_;
  std::string message_;
};

// printf-style formatting into a std::string.
std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string vformat(const char *fmt, va_list args);

// Throw smd::Error(code, formatted message).
[[noreturn]] void fail(smd_result_t code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

// Throw SMD_ERR_SYSTEM with strerror(errno) appended: "what: No such file".
[[noreturn]] void fail_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// The thread's last-error text, read by smd_last_error().
void set_last_error(const std::string &message);
// Whether this thread's last-error text is non-empty: clear_last_error(),
// on every successful call, then costs one plain thread-local read.
extern constinit thread_local bool tls_last_error_set;
void clear_last_error_text();
inline void clear_last_error() {
  if (tls_last_error_set) clear_last_error_text();
}
const char *last_error();

}  // namespace smd
