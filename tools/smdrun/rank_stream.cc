#include "rank_stream.h"

#include <algorithm>
#include <cerrno>
#include <sys/ioctl.h>
#include <unistd.h>

namespace smdrun {

size_t RankStream::forward(size_t max) {
  char buf[64 * 1024];
  ssize_t n;
  do {
    n = ::read(fd_.get(), buf, std::min(max, sizeof buf));
  } while (n < 0 && errno == EINTR);
  if (n < 0 && errno == EAGAIN) return 0;
  if (n <= 0) {  // end of stream, or a pipe error that means the same
    close();
    return 0;
  }
  std::string_view data(buf, static_cast<size_t>(n));
  // ld.so writes its message in one write before any of the program runs.
  if (data.find("error while loading shared libraries") != std::string_view::npos)
    saw_loader_error_ = true;
  std::string out;
  tagger_.feed(data, out);
  sink_->write(out);
  return static_cast<size_t>(n);
}

void RankStream::pump() {
  if (fd_.valid()) forward(SIZE_MAX);
}

void RankStream::drain() {
  int pending = 0;
  if (!fd_.valid() || ::ioctl(fd_.get(), FIONREAD, &pending) != 0) return;
  for (size_t left = static_cast<size_t>(pending); left > 0;) {
    size_t got = forward(left);
    if (got == 0) break;
    left -= got;
  }
}

void RankStream::close() {
  if (!fd_.valid()) return;
  std::string out;
  tagger_.finish(out);
  sink_->write(out);
  fd_.reset();
}

}  // namespace smdrun
