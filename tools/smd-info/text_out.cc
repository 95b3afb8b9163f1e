#include "text_out.h"

#include <algorithm>
#include <cstdio>

namespace smdinfo {

std::string json_string(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char esc[8];
      snprintf(esc, sizeof esc, "\\u%04x", c);
      out += esc;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string plain_list(const std::vector<int> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(v[i]);
  }
  return s;
}

std::string json_list(const std::vector<int> &v) {
  std::string s(1, '[');
  s += plain_list(v);
  s += ']';
  return s;
}

std::vector<std::string> align_columns(const std::vector<std::vector<std::string>> &rows) {
  std::vector<size_t> width;
  for (const auto &r : rows)
    for (size_t c = 0; c < r.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], r[c].size());
    }
  std::vector<std::string> lines;
  for (const auto &r : rows) {
    std::string text;
    for (size_t c = 0; c < r.size(); ++c) {
      text += r[c];
      if (c + 1 < r.size()) text += std::string(width[c] - r[c].size() + 2, ' ');
    }
    lines.push_back(text);
  }
  return lines;
}

}  // namespace smdinfo
