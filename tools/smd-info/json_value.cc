#include "json_value.h"

#include <cmath>
#include <optional>

#include "tool_support/core_interface.h"

namespace smdinfo {

namespace {
constexpr int kMaxDepth = 64;
}  // namespace

const Json *member(const Json &v, const std::string &key) {
  if (!v.is_object()) return nullptr;
  auto it = v.find(key);
  return it == v.end() ? nullptr : &*it;
}

int64_t int_of(const Json &v, const std::string &key, int64_t fallback) {
  const Json *m = member(v, key);
  if (!m || !m->is_number()) return fallback;
  if (m->is_number_unsigned()) {
    uint64_t u = m->get<uint64_t>();
    return u > uint64_t(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(u);
  }
  if (m->is_number_integer()) return m->get<int64_t>();
  double d = std::trunc(m->get<double>());
  if (!(d > -9.2e18)) return d < 0 ? INT64_MIN : fallback;  // NaN: the fallback
  return d < 9.2e18 ? static_cast<int64_t>(d) : INT64_MAX;
}

std::string string_of(const Json &v, const std::string &key, const std::string &fallback) {
  const Json *m = member(v, key);
  return m && m->is_string() ? m->get<std::string>() : fallback;
}

Json parse_json(const std::string &text) {
  // The callback sees each value's depth as it starts: deeper input is
  // refused before it is built.
  auto limit_depth = [](int depth, Json::parse_event_t event, Json &) {
    if ((event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start) &&
        depth >= kMaxDepth)
      throw JsonError{"nested deeper than " + std::to_string(kMaxDepth)};
    return true;
  };
  try {
    return Json::parse(text, limit_depth);
  } catch (const Json::exception &e) {
    throw JsonError{e.what()};
  }
}

Json read_json_file(const std::string &path, size_t max_bytes) {
  smd::FileRules rules;
  rules.max_bytes = max_bytes;
  std::string why;
  std::optional<std::string> text = smd::read_bounded_file(path, rules, &why);
  if (!text) throw JsonError{"cannot read " + why};
  try {
    return parse_json(*text);
  } catch (const JsonError &e) {
    throw JsonError{path + ": " + e.message};
  }
}

}  // namespace smdinfo
