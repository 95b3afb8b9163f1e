// A small strict JSON reader for the tests of smd-info's output: whole
// documents only (trailing text, trailing commas, bad escapes and
// non-integer numbers are errors), numbers as integers.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace jsonlite {

struct Value {
  enum class Type { kNull, kBool, kInt, kString, kArray, kObject } type = Type::kNull;
  bool b = false;
  int64_t i = 0;
  std::string s;
  std::vector<Value> items;                           // arrays
  std::vector<std::pair<std::string, Value>> fields;  // objects, in order

  const Value &at(const std::string &key) const;  // throws std::runtime_error
  bool has(const std::string &key) const;
  std::vector<int> ints() const;  // an array of integers
};

Value parse(const std::string &text);  // throws std::runtime_error

}  // namespace jsonlite
