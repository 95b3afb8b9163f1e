#include "core/coll/stream_copy.h"

#include <cstdint>
#include <cstring>

#include "core/util/params.h"

#if defined(__x86_64__)
#include <emmintrin.h>
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
// Read once: the registry is not free to consult in every copy.
int64_t stream_min_bytes() {
  static const int64_t v = param_int("SMD_STREAM_MIN_BYTES");
  return v;
}
bool stage_streams(size_t round_bytes) {
  static const int64_t min = param_int("SMD_STAGE_STREAM_MIN_BYTES");
  static const int64_t max = param_int("SMD_STAGE_STREAM_MAX_BYTES");
  return min >= 0 && round_bytes >= static_cast<uint64_t>(min) &&
         (max < 0 || round_bytes <= static_cast<uint64_t>(max));
}
}  // namespace

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

void stage_and_copy_out(void *stage, void *out, const void *src, size_t bytes,
                        size_t round_bytes, size_t op_bytes, bool stream_stage) {
  // Well inside a 32 KiB first-level cache, large enough that the two
  // copies run at full speed.
  constexpr size_t kBlock = 16 * 1024;
  auto *st = static_cast<uint8_t *>(stage);
  auto *o = static_cast<uint8_t *>(out);
  auto *s = static_cast<const uint8_t *>(src);
  if (!st) return copy_out(out, src, bytes, op_bytes);
  for (size_t off = 0; off < bytes; off += kBlock) {
    size_t len = bytes - off < kBlock ? bytes - off : kBlock;
    if (stream_stage) stream_copy(st + off, s + off, len);
    else stage_copy(st + off, s + off, len, round_bytes);
    copy_out(o + off, s + off, len, op_bytes);
  }
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
