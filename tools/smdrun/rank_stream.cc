#include "rank_stream.h"

#include <cerrno>
#include <unistd.h>

namespace smdrun {

void RankStream::pump(bool drain) {
  char buf[64 * 1024];
  while (fd_.valid()) {
    ssize_t n = ::read(fd_.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {  // end of stream, or a pipe error that means the same
      close();
      return;
    }
    std::string out;
    tagger_.feed(std::string_view(buf, static_cast<size_t>(n)), out);
    sink_->write(out);
    if (!drain) return;
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
