// One pipe from a rank (its stdout or stderr) to the matching output of
// smdrun, tagged line by line.
#pragma once

#include <string>

#include "fd_io.h"
#include "line_tagger.h"

namespace smdrun {

class RankStream {
 public:
  RankStream(UniqueFd fd, std::string prefix, OutputSink &sink)
      : fd_(std::move(fd)), tagger_(std::move(prefix)), sink_(&sink) {}

  int fd() const { return fd_.get(); }
  bool open() const { return fd_.valid(); }

  // Forwards one read's worth (so one chatty rank cannot starve the
  // others), or with `drain` everything the pipe holds now. At end of
  // stream, flushes the last partial line and closes.
  void pump(bool drain);

  // Gives up on the stream (its writers outlived the rank): flushes the
  // partial line and closes.
  void close();

 private:
  UniqueFd fd_;
  LineTagger tagger_;
  OutputSink *sink_;
};

}  // namespace smdrun
