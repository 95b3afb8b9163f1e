// smd-info trace OUT IN...: merges the per-rank Chrome trace files that
// SMD_TRACE writes (file.rank<R>.json) into one trace, one process per
// rank, readable by chrome://tracing and ui.perfetto.dev. A directory
// given as input stands for every *.rank<R>.json file in it.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include "commands.h"
#include "json_value.h"

namespace smdinfo {
namespace {

std::vector<std::string> expand(const std::vector<std::string> &inputs) {
  static const std::regex rank_file(R"(.*\.rank[0-9]+\.json)");
  std::vector<std::string> files;
  for (const std::string &in : inputs) {
    struct stat st;
    if (stat(in.c_str(), &st) != 0) throw JsonError{"cannot read " + in};
    if (!S_ISDIR(st.st_mode)) {
      files.push_back(in);
      continue;
    }
    std::vector<std::string> found;
    if (DIR *d = opendir(in.c_str())) {
      while (dirent *e = readdir(d))
        if (std::regex_match(e->d_name, rank_file)) found.push_back(in + "/" + e->d_name);
      closedir(d);
    }
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

}  // namespace

int run_trace(const Options &o) {
  std::vector<std::string> inputs(o.paths.begin() + 1, o.paths.end());
  std::vector<std::string> files = expand(inputs);
  if (files.empty()) throw JsonError{"no trace files (*.rank<R>.json) among the inputs"};
  std::string out = "{\"traceEvents\":[";
  size_t events = 0;
  for (const std::string &f : files) {
    Json v = read_json_file(f);
    const Json *list = member(v, "traceEvents");
    if (!list || !list->is_array()) throw JsonError{f + ": no traceEvents array"};
    for (const Json &e : *list) {
      if (events++) out += ",\n";
      out += e.dump(-1, ' ', false, Json::error_handler_t::replace);
    }
  }
  out += "],\"displayTimeUnit\":\"ns\"}\n";
  FILE *fp = fopen(o.paths[0].c_str(), "w");
  if (!fp) throw JsonError{"cannot write " + o.paths[0]};
  bool ok = fwrite(out.data(), 1, out.size(), fp) == out.size();
  ok = fclose(fp) == 0 && ok;
  if (!ok) throw JsonError{"cannot write " + o.paths[0]};
  printf("%s: %zu events from %zu files\n", o.paths[0].c_str(), events, files.size());
  return 0;
}

}  // namespace smdinfo
