// JSON for smd-info: nlohmann-json (Debian nlohmann-json3-dev) over the
// files smd itself writes (flight recorder dumps, traces), read with a size
// limit and a nesting limit, and typed members with a fallback. Throws
// JsonError naming the file and the problem.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace smdinfo {

// Objects keep their members in file order (a trace's events are copied
// through as they were written).
using Json = nlohmann::ordered_json;

struct JsonError {
  std::string message;
};

// The member `key` of an object, or nullptr (also when v is no object).
const Json *member(const Json &v, const std::string &key);
// Typed members with a fallback when absent or of another type; a number
// that is not an integer is truncated, one beyond int64 clamped.
int64_t int_of(const Json &v, const std::string &key, int64_t fallback = 0);
std::string string_of(const Json &v, const std::string &key, const std::string &fallback = "");

// Parses the whole text (nesting at most 64 deep); trailing non-space is an error.
Json parse_json(const std::string &text);
// Reads and parses a regular file of at most max_bytes (a FIFO, device or
// larger file is refused unread); JsonError names the file.
Json read_json_file(const std::string &path, size_t max_bytes = size_t(1) << 34);

}  // namespace smdinfo
