#include "job_token.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <unistd.h>

#include "fd_io.h"

namespace smdrun {

std::string job_token() {
  const char *inherited = std::getenv("SMD_JOB_TOKEN");
  if (inherited && *inherited) return inherited;

  unsigned char bytes[16];
  UniqueFd random(::open("/dev/urandom", O_RDONLY | O_CLOEXEC));
  size_t got = 0;
  while (random.valid() && got < sizeof bytes) {
    ssize_t n = ::read(random.get(), bytes + got, sizeof bytes - got);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) errno = EIO;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  if (got < sizeof bytes)
    throw std::runtime_error(std::string("cannot read /dev/urandom: ") + std::strerror(errno));

  static const char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 0xf];
  }
  return token;
}

}  // namespace smdrun
