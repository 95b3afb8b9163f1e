// The timeline: with SMD_TRACE=file.json each rank writes a Chrome trace
// (the trace-event JSON that chrome://tracing and ui.perfetto.dev read) to
// file.rank<R>.json (R: the rank in the process's first world): a complete ("X") event per
// collective call on a track per communicator, and an async begin/end ("b"/"e") pair per
// point-to-point send or receive (they overlap each other and the call).
// `smd-info trace OUT IN...` merges the ranks' files.
//
// Off (SMD_TRACE unset) a world has no tracer, and each hook is one
// branch on a null pointer. On, events are formatted into a buffer under a
// lock and appended to the file as it fills, and when the world ends or
// the process exits.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <set>
#include <string>

namespace smd {

class Tracer {
 public:
  // The process's tracer, or null when SMD_TRACE is unset: the first world
  // made opens the file under its rank; later worlds of the process (torch
  // makes one per process group) share it, each numbered in *world_no
  // (0 for the first) so that their communicators get tracks of their own.
  // Throws SMD_ERR_SYSTEM if the file cannot be created.
  static std::shared_ptr<Tracer> for_world(int world_rank, uint32_t *world_no);
  // The track of communicator `comm` of world `world_no`.
  static uint32_t track(uint32_t world_no, uint32_t comm) { return world_no << 16 | comm; }
  ~Tracer();

  // The trace's clock: wall-clock microseconds (ranks on different
  // machines line up as well as their clocks agree).
  static int64_t now_us();

  // A collective call on a track, from start_us to now.
  void collective(uint32_t track, const char *kind, const char *algorithm, uint64_t seq,
                  uint64_t count, const char *datatype, int root, int64_t start_us,
                  const char *result);
  // A transfer with world rank `peer` of `bytes`, posted at start_us,
  // complete now.
  void transfer(uint32_t track, bool send, int peer, uint64_t bytes, uint64_t tag,
                int64_t start_us);
  const std::string &path() const { return path_; }
  // Writes what is buffered and ends the file; later events are dropped.
  // Runs at exit for tracers whose world was never destroyed.
  void close();

  // file.json -> file.rank3.json; a name without .json gets .rank3.json.
  static std::string rank_path(const std::string &base, int world_rank);

 private:
  Tracer(FILE *f, std::string path, int rank);
  void event(const std::string &json);  // takes the lock
  void flush_locked();
  FILE *file_;
  std::string path_;
  int rank_;
  std::mutex mu_;
  std::string pending_;
  std::set<uint32_t> tracks_named_;
  uint32_t worlds_ = 0;
  bool first_ = true;
  uint64_t next_id_ = 0;  // of async transfer events
};

}  // namespace smd
