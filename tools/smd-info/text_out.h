// Text pieces of smd-info's output: JSON strings and rank lists, and
// aligned columns for the human-readable tables.
#pragma once

#include <string>
#include <vector>

namespace smdinfo {

std::string json_string(const std::string &s);      // quoted and escaped
std::string json_list(const std::vector<int> &v);   // [0,1,4,5]
std::string plain_list(const std::vector<int> &v);  // 0,1,4,5

// Rows of cells as lines with every column padded to its widest cell (two
// spaces between columns, none at the end of a line).
std::vector<std::string> align_columns(const std::vector<std::vector<std::string>> &rows);

}  // namespace smdinfo
