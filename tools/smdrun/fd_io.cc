#include "fd_io.h"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

namespace smdrun {

UniqueFd &UniqueFd::operator=(UniqueFd &&other) noexcept {
  if (this != &other) reset(other.release());
  return *this;
}

int UniqueFd::release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

void OutputSink::write(std::string_view data) {
  while (!broken_ && !data.empty()) {
    ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      broken_ = true;
      return;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

void ensure_standard_fds() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) >= 0) continue;
    // open() takes the lowest free number: this one, as the lower ones
    // are open by now. The fd stays open for the life of smdrun.
    (void)::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
  }
}

}  // namespace smdrun
