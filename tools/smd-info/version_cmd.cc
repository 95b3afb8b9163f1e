// smd-info version: the library actually loaded (smd_get_version) and the
// build smd-info comes from (common/build_text.h, shared with smdrun).
#include <dlfcn.h>
#include <smd.h>

#include <cstdio>
#include <string>

#include "commands.h"
#include "common/build_text.h"
#include "text_out.h"

namespace smdinfo {

int run_version(const Options &o) {
  int major = 0, minor = 0, patch = 0;
  smd_get_version(&major, &minor, &patch);
  std::string library =
      std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  Dl_info info{};
  std::string path = dladdr(reinterpret_cast<void *>(&smd_get_version), &info) && info.dli_fname
                         ? info.dli_fname
                         : "?";
  std::string text = "library: " + library + " (" + path + ")\n" + smdtools::build_text();
  if (!o.json) {
    fputs(text.c_str(), stdout);
    return 0;
  }
  // The same "key: value" lines as one JSON object.
  puts("{");
  size_t pos = 0;
  bool first = true;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos), colon = text.find(": ", pos);
    std::string key = text.substr(pos, colon - pos),
                value = text.substr(colon + 2, end - colon - 2);
    for (char &c : key) c = c == ' ' ? '_' : c;
    printf("%s  %s: %s", first ? "" : ",\n", json_string(key).c_str(), json_string(value).c_str());
    first = false;
    pos = end + 1;
  }
  puts("\n}");
  return 0;
}

}  // namespace smdinfo
