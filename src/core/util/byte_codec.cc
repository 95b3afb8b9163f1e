#include "core/util/byte_codec.h"

#include "core/util/error.h"

namespace smd {

ByteWriter &ByteWriter::u8(uint8_t v) {
  out_.push_back(v);
  return *this;
}

ByteWriter &ByteWriter::u32(uint32_t v) {
  for (int i = 0; i < 4; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  return *this;
}

ByteWriter &ByteWriter::u64(uint64_t v) {
  for (int i = 0; i < 8; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  return *this;
}

ByteWriter &ByteWriter::raw(const void *data, size_t size) {
  const uint8_t *p = static_cast<const uint8_t *>(data);
  out_.insert(out_.end(), p, p + size);
  return *this;
}

ByteWriter &ByteWriter::blob(const void *data, size_t size) {
  u32(static_cast<uint32_t>(size));
  return raw(data, size);
}

void ByteReader::need(size_t n, const char *field) const {
  if (left() < n)
    fail(SMD_ERR_BOOTSTRAP, "malformed %s: %s cut short (%zu bytes left, %zu needed)", subject_,
         field, left(), n);
}

uint8_t ByteReader::u8(const char *field) {
  need(1, field);
  return *p_++;
}

uint32_t ByteReader::u32(const char *field) {
  need(4, field);
  uint32_t v = load_u32_le(p_);
  p_ += 4;
  return v;
}

uint64_t ByteReader::u64(const char *field) {
  need(8, field);
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p_[i]) << (8 * i);
  p_ += 8;
  return v;
}

std::string ByteReader::raw_text(size_t size, const char *field) {
  return std::string(raw_view(size, field));
}

std::string_view ByteReader::raw_view(size_t size, const char *field) {
  need(size, field);
  std::string_view v(reinterpret_cast<const char *>(p_), size);
  p_ += size;
  return v;
}

std::string ByteReader::text(const char *field) { return raw_text(u32(field), field); }

Bytes ByteReader::bytes(const char *field) {
  uint32_t n = u32(field);
  need(n, field);
  Bytes b(p_, p_ + n);
  p_ += n;
  return b;
}

uint32_t ByteReader::count(const char *field, size_t min_item) {
  uint32_t n = u32(field);
  if (static_cast<size_t>(n) * min_item > left())
    fail(SMD_ERR_BOOTSTRAP, "malformed %s: %s claims %u items in %zu bytes", subject_, field, n,
         left());
  return n;
}

}  // namespace smd
