// The clock deadlines and grace periods are measured on.
#include <time.h>

#include "context.h"

namespace smd_ucx {

int64_t now_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace smd_ucx
