// Loading a transport plugin the way the core does (dlopen RTLD_NOW |
// RTLD_LOCAL, entry symbol, size and version checks), reporting every
// problem with the table rather than only the first.
#pragma once

#include <string>
#include <vector>

#include "smd_transport.h"

namespace tcheck {

struct LoadedPlugin {
  std::string path;
  void *handle = nullptr;
  // A zero-padded copy: entries beyond the plugin's struct_size read NULL.
  smd_transport_v1_t table{};
};

// Loads and validates `path`. On failure returns false and fills
// `problems` with one line each, e.g. "libfoo.so: entry 'irecv' is NULL".
bool load_plugin(const std::string &path, LoadedPlugin *out, std::vector<std::string> *problems);

// "RMA|SEGMENTS|..." for caps.
std::string caps_string(uint64_t caps);

const char *status_name(smd_transport_status_t s);

}  // namespace tcheck
