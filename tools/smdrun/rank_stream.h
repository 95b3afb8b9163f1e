// One pipe from a rank (its stdout or stderr) to the matching output of
// smdrun, tagged line by line.
#pragma once

#include <cstddef>
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
  // others). At end of stream, flushes the last partial line and closes.
  void pump();

  // Forwards what the pipe holds right now and no more, so a writer that
  // keeps adding (something the rank left behind) cannot hold us here.
  void drain();

  // Gives up on the stream (its writers outlived the rank): flushes the
  // partial line and closes.
  void close();

  // Whether the stream carried the dynamic loader's "error while loading
  // shared libraries" (the program could not start).
  bool saw_loader_error() const { return saw_loader_error_; }

 private:
  // One read of at most `max` bytes (> 0), forwarded; returns the bytes
  // read, 0 when none were waiting or the stream ended.
  size_t forward(size_t max);

  UniqueFd fd_;
  LineTagger tagger_;
  OutputSink *sink_;
  bool saw_loader_error_ = false;
};

}  // namespace smdrun
