#include "core/observe/tracer.h"

#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <ctime>
#include <set>

#include "core/util/error.h"
#include "core/util/params.h"
#include "core/util/safe_file.h"

namespace smd {

namespace {
constexpr size_t kFlushBytes = 1 << 16;

// Tracers alive now, so that a process that exits without destroying its
// world (common under frameworks) still leaves a whole file. Never freed:
// exit handlers may run after static destructors.
std::mutex &live_mu() {
  static auto *mu = new std::mutex;
  return *mu;
}
std::set<Tracer *> &live() {
  static auto *set = new std::set<Tracer *>;
  return *set;
}
void close_live_tracers() {
  std::lock_guard<std::mutex> lock(live_mu());
  for (Tracer *t : live()) t->close();
}
}  // namespace

std::string Tracer::rank_path(const std::string &base, int world_rank) {
  std::string stem = base;
  const std::string ext = ".json";
  if (stem.size() > ext.size() && stem.compare(stem.size() - ext.size(), ext.size(), ext) == 0)
    stem.resize(stem.size() - ext.size());
  return stem + ".rank" + std::to_string(world_rank) + ext;
}

std::shared_ptr<Tracer> Tracer::for_world(int world_rank, uint32_t *world_no) {
  static std::mutex mu;
  static std::weak_ptr<Tracer> current;
  *world_no = 0;
  auto base = param_env("SMD_TRACE");
  if (!base) return nullptr;
  std::lock_guard<std::mutex> lock(mu);
  if (auto t = current.lock()) {
    std::lock_guard<std::mutex> tl(t->mu_);
    *world_no = ++t->worlds_;
    return t;
  }
  std::string path = rank_path(*base, world_rank);
  // A new file renamed into place: a link or file someone planted at the
  // (predictable) name is replaced, never written through.
  std::string why;
  int fd = replace_with_new_file(path, 0644, &why);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : nullptr;
  if (!f) {
    if (fd >= 0) {
      why = format("%s: %s", path.c_str(), strerror(errno));
      ::close(fd);
    }
    fail(SMD_ERR_SYSTEM, "SMD_TRACE: cannot create %s", why.c_str());
  }
  std::shared_ptr<Tracer> t(new Tracer(f, path, world_rank));
  current = t;
  return t;
}

Tracer::Tracer(FILE *f, std::string path, int rank)
    : file_(f), path_(std::move(path)), rank_(rank) {
  {
    static std::once_flag once;
    std::call_once(once, [] { atexit(close_live_tracers); });
    std::lock_guard<std::mutex> lock(live_mu());
    live().insert(this);
  }
  fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", file_);
  event(
      format("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
             "\"args\":{\"name\":\"rank %d\"}}",
             rank_, rank_));
  event(
      format("{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
             "\"args\":{\"sort_index\":%d}}",
             rank_, rank_));
}

Tracer::~Tracer() {
  {
    std::lock_guard<std::mutex> lock(live_mu());
    live().erase(this);
  }
  close();
}

void Tracer::close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!file_) return;
  flush_locked();
  fputs("\n]}\n", file_);
  fclose(file_);
  file_ = nullptr;
}

int64_t Tracer::now_us() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

void Tracer::event(const std::string &json) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!file_) return;  // closed at exit
  if (!first_) pending_ += ",\n";
  first_ = false;
  pending_ += json;
  if (pending_.size() >= kFlushBytes) flush_locked();
}

void Tracer::flush_locked() {
  if (pending_.empty()) return;
  fwrite(pending_.data(), 1, pending_.size(), file_);
  fflush(file_);
  pending_.clear();
}

void Tracer::collective(uint32_t track, const char *kind, const char *algorithm, uint64_t seq,
                        uint64_t count, const char *datatype, int root, int64_t start_us,
                        const char *result) {
  int64_t end = now_us();
  bool named;
  {
    std::lock_guard<std::mutex> lock(mu_);
    named = !tracks_named_.insert(track).second;
  }
  if (!named) {
    uint32_t world = track >> 16, comm = track & 0xffff;
    std::string name = world ? format("world %u comm %u", world, comm) : format("comm %u", comm);
    event(
        format("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%u,"
               "\"args\":{\"name\":\"%s\"}}",
               rank_, track, name.c_str()));
  }
  event(
      format("{\"name\":\"%s\",\"cat\":\"collective\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u,"
             "\"ts\":%" PRId64 ",\"dur\":%" PRId64 ",\"args\":{\"seq\":%" PRIu64
             ",\"algorithm\":\"%s\",\"count\":%" PRIu64 ",\"datatype\":\"%s\",\"root\":%d,"
             "\"result\":\"%s\"}}",
             kind, rank_, track, start_us, end - start_us, seq, algorithm, count, datatype, root,
             result));
}

void Tracer::transfer(uint32_t track, bool send, int peer, uint64_t bytes, uint64_t tag,
                      int64_t start_us) {
  int64_t end = now_us();
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Unique across the ranks of a merged trace, whose async ids share a scope.
    id = (static_cast<uint64_t>(rank_) << 40) | next_id_++;
  }
  const char *name = send ? "send" : "recv";
  event(format("{\"name\":\"%s\",\"cat\":\"transport\",\"ph\":\"b\",\"id\":%" PRIu64
               ",\"pid\":%d,\"tid\":%u,\"ts\":%" PRId64 ",\"args\":{\"peer\":%d,\"bytes\":%" PRIu64
               ",\"tag\":\"0x%" PRIx64 "\"}}",
               name, id, rank_, track, start_us, peer, bytes, tag));
  event(format("{\"name\":\"%s\",\"cat\":\"transport\",\"ph\":\"e\",\"id\":%" PRIu64
               ",\"pid\":%d,\"tid\":%u,\"ts\":%" PRId64 "}",
               name, id, rank_, track, end));
}

}  // namespace smd
