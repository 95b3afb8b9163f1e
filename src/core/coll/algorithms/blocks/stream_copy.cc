#include "core/coll/algorithms/blocks/stream_copy.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

#include "core/util/clock.h"
#include "core/util/params.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#include <x86intrin.h>
#endif

namespace smd {

void stream_copy(void *dst, const void *src, size_t bytes) {
#if defined(__x86_64__)
  auto *d = static_cast<uint8_t *>(dst);
  auto *s = static_cast<const uint8_t *>(src);
  // Align the destination to 16 bytes (SSE2, in every x86-64 CPU).
  size_t head = (16 - (reinterpret_cast<uintptr_t>(d) & 15)) & 15;
  if (head > bytes) head = bytes;
  memcpy(d, s, head);
  d += head;
  s += head;
  bytes -= head;
  size_t blocks = bytes / 64;
  for (size_t i = 0; i < blocks; ++i, d += 64, s += 64) {
    __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s));
    __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + 16));
    __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + 32));
    __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + 48));
    _mm_stream_si128(reinterpret_cast<__m128i *>(d), a);
    _mm_stream_si128(reinterpret_cast<__m128i *>(d + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i *>(d + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i *>(d + 48), e);
  }
  memcpy(d, s, bytes % 64);
  _mm_sfence();
#else
  memcpy(dst, src, bytes);
#endif
}

namespace {
std::atomic<int64_t> g_measured_stream_min{-2};  // -2: none measured

// Read once: the registry is not free to consult in every copy. An
// explicit setting wins over the measured crossover.
int64_t stream_min_bytes() {
  static const bool set = param_origin("SMD_STREAM_MIN_BYTES") == ParamOrigin::kEnvironment;
  static const int64_t v = param_int("SMD_STREAM_MIN_BYTES");
  if (set) return v;
  int64_t measured = g_measured_stream_min.load(std::memory_order_relaxed);
  return measured == -2 ? v : measured;
}
// The staging range: packed in one word (min in the high half, max in the
// low, each +1 so that -1 packs as 0) so that a reader never pairs one
// range's min with another's max; kUnset until a probe's range is adopted.
constexpr uint64_t kUnset = ~0ull;
std::atomic<uint64_t> g_measured_stage_range{kUnset};

uint64_t pack_range(int64_t min, int64_t max) {
  auto half = [](int64_t v) {
    return static_cast<uint64_t>(std::clamp<int64_t>(v, -1, 0x7ffffffe) + 1);
  };
  return half(min) << 32 | half(max);
}

}  // namespace

// The probe's forcing: per thread, and looked up only while some thread
// forces (a thread-local read in a shared library is a call; this is the
// path of every staged round).
static thread_local int t_forced_staging = -1;  // -1: not forced; else 0 / 1
static std::atomic<int> g_forcing_threads{0};

bool stage_streams(size_t round_bytes) {
  if (g_forcing_threads.load(std::memory_order_relaxed) != 0 && t_forced_staging >= 0)
    return t_forced_staging != 0;
  static const bool set = param_origin("SMD_STAGE_STREAM_MIN_BYTES") == ParamOrigin::kEnvironment ||
                          param_origin("SMD_STAGE_STREAM_MAX_BYTES") == ParamOrigin::kEnvironment;
  static const uint64_t documented =
      pack_range(param_int("SMD_STAGE_STREAM_MIN_BYTES"), param_int("SMD_STAGE_STREAM_MAX_BYTES"));
  uint64_t range = set ? kUnset : g_measured_stage_range.load(std::memory_order_relaxed);
  if (range == kUnset) range = documented;
  int64_t min = static_cast<int64_t>(range >> 32) - 1;
  int64_t max = static_cast<int64_t>(range & 0xffffffffu) - 1;
  return min >= 0 && round_bytes >= static_cast<uint64_t>(min) &&
         (max < 0 || round_bytes <= static_cast<uint64_t>(max));
}

void stage_copy(void *dst, const void *src, size_t bytes, size_t round_bytes) {
  if (bytes == 0 || dst == src) return;
  if (stage_streams(round_bytes)) stream_copy(dst, src, bytes);
  else memmove(dst, src, bytes);
}

void stage_except(void *dst, const void *src, size_t len, size_t hole_off, size_t hole_len) {
  auto *d = static_cast<uint8_t *>(dst);
  auto *s = static_cast<const uint8_t *>(src);
  size_t end = hole_off + hole_len;
  stage_copy(d, s, hole_off, len - hole_len);
  if (end < len) stage_copy(d + end, s + end, len - end, len - hole_len);
}

namespace {

bool adapt_staging() {
  static const bool v = param_bool("SMD_STAGE_ADAPT");
  return v;
}

uint64_t ticks() {
#if defined(__x86_64__)
  return __rdtsc();  // only ratios are compared: the unit does not matter
#else
  return static_cast<uint64_t>(now_ns());
#endif
}

}  // namespace

// Slow transfer periods (see broadcast.cc): while the ranks' CPUs do not
// share a cache, a staging store to a line a reader held costs several
// times more. A round that stages and also copies to this rank's own
// output with streaming stores (which go to memory and involve no other
// core) carries its own yardstick: staging takes a small multiple of that
// copy's time in fast periods and several times more in slow ones
// (docs/PERFORMANCE.md has the ratios measured). When two windows of
// kWindow rounds in a row stage over kSlower x slower (one alone may be a
// preemption, or the first use of the staging buffers, which faults their
// pages in), staging streams for kStreamNs, then ordinary stores are
// measured again. Threads race on these counters harmlessly (a lost update
// delays a switch by a window).
void SlowTransferGuard::observe(uint64_t staging, uint64_t copy_out) {
  uint64_t s = staging_.fetch_add(staging, std::memory_order_relaxed) + staging;
  uint64_t c = copy_out_.fetch_add(copy_out, std::memory_order_relaxed) + copy_out;
  if (rounds_.fetch_add(1, std::memory_order_relaxed) + 1 < kWindow) return;
  rounds_.store(0, std::memory_order_relaxed);
  staging_.store(0, std::memory_order_relaxed);
  copy_out_.store(0, std::memory_order_relaxed);
  if (static_cast<double>(s) <= kSlower * static_cast<double>(c)) {
    slow_windows_.store(0, std::memory_order_relaxed);
  } else if (slow_windows_.fetch_add(1, std::memory_order_relaxed) + 1 >= 2) {
    slow_windows_.store(0, std::memory_order_relaxed);
    stream_until_.store(clock_() + kStreamNs, std::memory_order_relaxed);
  }
}

void stage_and_copy_out(void *stage, void *out, const void *src, size_t bytes, size_t round_bytes,
                        size_t op_bytes, bool stream_stage, SlowTransferGuard *guard) {
  // Well inside a 32 KiB first-level cache, large enough that the two
  // copies run at full speed.
  constexpr size_t kBlock = 16 * 1024;
  auto *st = static_cast<uint8_t *>(stage);
  auto *o = static_cast<uint8_t *>(out);
  auto *s = static_cast<const uint8_t *>(src);
  if (!st) return copy_out(out, src, bytes, op_bytes);
  // Large rounds with a streaming copy out watch for slow transfer periods.
  bool watch = guard && !stream_stage && out != src && adapt_staging() &&
               streams_output(op_bytes) && !stage_streams(round_bytes);
  if (watch && guard->streaming()) {
    stream_stage = true;
    watch = false;
  }
  uint64_t staging = 0, copying = 0;  // ticks, counted only when watching
  for (size_t off = 0; off < bytes; off += kBlock) {
    size_t len = bytes - off < kBlock ? bytes - off : kBlock;
    uint64_t t0 = watch ? ticks() : 0;
    if (stream_stage) stream_copy(st + off, s + off, len);
    else stage_copy(st + off, s + off, len, round_bytes);
    uint64_t t1 = watch ? ticks() : 0;
    copy_out(o + off, s + off, len, op_bytes);
    if (watch) {
      staging += t1 - t0;
      copying += ticks() - t1;
    }
  }
  if (watch) guard->observe(staging, copying);
}

ForcedStaging::ForcedStaging(bool streaming) : previous_(t_forced_staging) {
  t_forced_staging = streaming ? 1 : 0;
  g_forcing_threads.fetch_add(1, std::memory_order_relaxed);
}
ForcedStaging::~ForcedStaging() {
  g_forcing_threads.fetch_sub(1, std::memory_order_relaxed);
  t_forced_staging = previous_;
}

void adopt_stage_stream_range(int64_t min_bytes, int64_t max_bytes) {
  g_measured_stage_range.store(pack_range(min_bytes, max_bytes), std::memory_order_relaxed);
}

void adopt_stream_min_bytes(int64_t bytes) {
  g_measured_stream_min.store(bytes, std::memory_order_relaxed);
}

bool streams_output(size_t op_bytes) {
  int64_t min = stream_min_bytes();
  return min >= 0 && op_bytes >= static_cast<uint64_t>(min);
}

void copy_out(void *dst, const void *src, size_t bytes, size_t op_bytes) {
  if (bytes == 0 || dst == src) return;
  if (streams_output(op_bytes)) stream_copy(dst, src, bytes);
  else memmove(dst, src, bytes);
}

}  // namespace smd
