// The binary form of the records ranks exchange (store messages, rank
// records, the rendezvous' payloads): little-endian fixed-width integers,
// and byte strings prefixed by their 32-bit length. One writer and one
// reader, so that every record is bounds-checked the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/util/bytes.h"

namespace smd {

// The little-endian u32 at p, and its inverse (for length prefixes that are
// filled in after the body).
inline uint32_t load_u32_le(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}
inline void store_u32_le(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// Appends to a Bytes it does not own.
class ByteWriter {
 public:
  explicit ByteWriter(Bytes &out) : out_(out) {}
  ByteWriter &u8(uint8_t v);
  ByteWriter &u32(uint32_t v);
  ByteWriter &u64(uint64_t v);
  // The bytes as they are, no length before them.
  ByteWriter &raw(const void *data, size_t size);
  // A u32 length, then the bytes (the caller keeps size below 4 GiB).
  ByteWriter &blob(const void *data, size_t size);
  ByteWriter &blob(std::string_view s) { return blob(s.data(), s.size()); }
  ByteWriter &blob(const Bytes &b) { return blob(b.data(), b.size()); }

 private:
  Bytes &out_;
};

// Reads what ByteWriter wrote. A field that runs past the end throws
// smd::Error SMD_ERR_BOOTSTRAP "malformed <subject>: <field> cut short
// (N bytes left, M needed)"; nothing is allocated from a length that the
// bytes left cannot hold.
class ByteReader {
 public:
  // subject names the record in errors ("store message"); it and data
  // must outlive the reader.
  ByteReader(const uint8_t *data, size_t size, const char *subject)
      : p_(data), end_(data + size), subject_(subject) {}
  ByteReader(const Bytes &b, const char *subject) : ByteReader(b.data(), b.size(), subject) {}

  uint8_t u8(const char *field);
  uint32_t u32(const char *field);
  uint64_t u64(const char *field);
  // `size` bytes as text, no length before them.
  std::string raw_text(size_t size, const char *field);
  // A u32 length, then that many bytes.
  std::string text(const char *field);
  Bytes bytes(const char *field);
  // raw_text and bytes left where they are: views into the reader's data.
  std::string_view raw_view(size_t size, const char *field);
  std::string_view bytes_view(const char *field) { return raw_view(u32(field), field); }
  // A u32 item count, refused when that many items of at least min_item
  // bytes each could not fit in what is left.
  uint32_t count(const char *field, size_t min_item);

  size_t left() const { return static_cast<size_t>(end_ - p_); }
  bool done() const { return p_ == end_; }

 private:
  void need(size_t n, const char *field) const;
  const uint8_t *p_;
  const uint8_t *end_;
  const char *subject_;
};

}  // namespace smd
