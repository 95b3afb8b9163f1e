// A small JSON reader for the files smd itself writes (flight recorder
// dumps, traces): a value tree, numbers kept as text too so 64-bit
// integers survive. Throws JsonError with the offset of the problem.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace smdinfo {

struct JsonError {
  std::string message;
};

struct JsonValue {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject } type = Type::kNull;
  bool boolean = false;
  std::string text;  // a string's value, or a number as written
  std::vector<JsonValue> items;
  std::vector<std::pair<std::string, JsonValue>> members;  // in file order

  // The member named `key`, or nullptr (objects only).
  const JsonValue *find(const std::string &key) const;
  // Typed members with a fallback when absent or of another type.
  int64_t int_of(const std::string &key, int64_t fallback = 0) const;
  std::string string_of(const std::string &key, const std::string &fallback = "") const;
};

// Parses the whole text (nesting at most 64 deep); trailing non-space is an error.
JsonValue parse_json(const std::string &text);
// The value as compact JSON text (appended to out).
void write_json(const JsonValue &v, std::string &out);
// Reads and parses a regular file of at most max_bytes (a FIFO, device or
// larger file is refused unread); JsonError names the file.
JsonValue read_json_file(const std::string &path, size_t max_bytes = size_t(1) << 34);

}  // namespace smdinfo
