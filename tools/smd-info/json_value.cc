#include "json_value.h"

#include <cstdio>
#include <cstdlib>
#include <optional>

#include "core/util/safe_file.h"

namespace smdinfo {
namespace {

class Parser {
 public:
  explicit Parser(const std::string &s) : s_(s) {}

  JsonValue document() {
    JsonValue v = value(0);
    skip_space();
    if (pos_ != s_.size()) fail("text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string &what) {
    throw JsonError{what + " at offset " + std::to_string(pos_)};
  }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t'))
      ++pos_;
  }
  bool take(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!take(c)) fail(std::string("expected '") + c + "'");
  }
  bool word(const char *w) {
    size_t n = std::char_traits<char>::length(w);
    if (s_.compare(pos_, n, w) != 0) return false;
    pos_ += n;
    return true;
  }

  JsonValue value(int depth) {
    if (depth > 64) fail("nesting deeper than 64");
    skip_space();
    if (pos_ >= s_.size()) fail("unexpected end");
    JsonValue v;
    char c = s_[pos_];
    if (c == '{') {
      ++pos_;
      v.type = JsonValue::Type::kObject;
      if (take('}')) return v;
      do {
        skip_space();
        std::string key = string();
        expect(':');
        v.members.emplace_back(std::move(key), value(depth + 1));
      } while (take(','));
      expect('}');
    } else if (c == '[') {
      ++pos_;
      v.type = JsonValue::Type::kArray;
      if (take(']')) return v;
      do v.items.push_back(value(depth + 1));
      while (take(','));
      expect(']');
    } else if (c == '"') {
      v.type = JsonValue::Type::kString;
      v.text = string();
    } else if (word("true")) {
      v.type = JsonValue::Type::kBool;
      v.boolean = true;
    } else if (word("false")) {
      v.type = JsonValue::Type::kBool;
    } else if (word("null")) {
      v.type = JsonValue::Type::kNull;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.type = JsonValue::Type::kNumber;
      size_t start = pos_;
      if (s_[pos_] == '-') ++pos_;
      while (pos_ < s_.size() && strchr_num(s_[pos_])) ++pos_;
      v.text = s_.substr(start, pos_ - start);
      if (v.text == "-") fail("a number without digits");
    } else {
      fail(std::string("unexpected character '") + c + "'");
    }
    return v;
  }
  static bool strchr_num(char c) {
    return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
  }
  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  std::string string() {
    if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a string");
    ++pos_;
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) fail("unterminated string");
      char c = s_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) fail("unterminated escape");
      char e = s_[pos_++];
      switch (e) {
        case '"': case '\\': case '/': out.push_back(e); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
          unsigned cp = 0;
          for (int i = 0; i < 4; ++i) {
            int h = pos_ < s_.size() ? hex(s_[pos_]) : -1;
            if (h < 0) fail("bad \\u escape");
            cp = cp * 16 + static_cast<unsigned>(h);
            ++pos_;
          }
          // UTF-8 of the code unit (surrogates kept as they are: names only).
          if (cp < 0x80) {
            out.push_back(static_cast<char>(cp));
          } else if (cp < 0x800) {
            out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
          } else {
            out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
          }
          break;
        }
        default: fail("bad escape");
      }
    }
  }

  const std::string &s_;
  size_t pos_ = 0;
};

}  // namespace

const JsonValue *JsonValue::find(const std::string &key) const {
  for (const auto &m : members)
    if (m.first == key) return &m.second;
  return nullptr;
}

int64_t JsonValue::int_of(const std::string &key, int64_t fallback) const {
  const JsonValue *v = find(key);
  if (!v || v->type != Type::kNumber) return fallback;
  return strtoll(v->text.c_str(), nullptr, 10);
}

std::string JsonValue::string_of(const std::string &key, const std::string &fallback) const {
  const JsonValue *v = find(key);
  return v && v->type == Type::kString ? v->text : fallback;
}

void write_json(const JsonValue &v, std::string &out) {
  auto quoted = [&out](const std::string &s) {
    out.push_back('"');
    for (unsigned char c : s) {
      if (c == '"' || c == '\\') {
        out.push_back('\\');
        out.push_back(static_cast<char>(c));
      } else if (c < 0x20) {
        char buf[8];
        snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out.push_back(static_cast<char>(c));
      }
    }
    out.push_back('"');
  };
  switch (v.type) {
    case JsonValue::Type::kNull: out += "null"; break;
    case JsonValue::Type::kBool: out += v.boolean ? "true" : "false"; break;
    case JsonValue::Type::kNumber: out += v.text; break;
    case JsonValue::Type::kString: quoted(v.text); break;
    case JsonValue::Type::kArray:
      out.push_back('[');
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i) out.push_back(',');
        write_json(v.items[i], out);
      }
      out.push_back(']');
      break;
    case JsonValue::Type::kObject:
      out.push_back('{');
      for (size_t i = 0; i < v.members.size(); ++i) {
        if (i) out.push_back(',');
        quoted(v.members[i].first);
        out.push_back(':');
        write_json(v.members[i].second, out);
      }
      out.push_back('}');
      break;
  }
}

JsonValue parse_json(const std::string &text) { return Parser(text).document(); }

JsonValue read_json_file(const std::string &path, size_t max_bytes) {
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
