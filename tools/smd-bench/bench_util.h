// What smd-bench's modes share: failing loudly on an smd error (a tool,
// not the library: it exits) and a monotonic clock.
#pragma once

#include <smd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace smdbench {

[[noreturn]] inline void die(const char *what, smd_result_t r) {
  fprintf(stderr, "smd-bench: %s failed: %s: %s\n", what, smd_result_string(r), smd_last_error());
  exit(1);
}

#define CHECK(call)                                    \
  do {                                                 \
    smd_result_t r_ = (call);                          \
    if (r_ != SMD_SUCCESS) ::smdbench::die(#call, r_); \
  } while (0)

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace smdbench
