// The build's description as `smd-info version` and `smdrun --version`
// print it: the version and ABIs of the headers built against, git
// describe of the source tree, the plugins and options built.
// Header-only: smdrun links nothing of smd.
#pragma once

#include <smd.h>
#include <smd_transport.h>

#include <string>

#include "smd_build_info.h"
#include "smd_git_describe.h"

namespace smdtools {

// "key: value" lines, each ending in '\n'.
inline std::string build_text() {
  std::string s;
  s += "version: " SMD_BUILD_VERSION "\n";
  s += "header: " + std::to_string(SMD_VERSION_MAJOR) + "." + std::to_string(SMD_VERSION_MINOR) +
       "." + std::to_string(SMD_VERSION_PATCH) + " (smd.h)\n";
  s += "abi: libsmd.so." SMD_BUILD_ABI " (soname)\n";
  s += "plugin abi: " + std::to_string(SMD_TRANSPORT_ABI_VERSION) + " (smd_transport.h)\n";
  s += "git: " SMD_GIT_DESCRIBE "\n";
  s += "plugins built: " SMD_BUILD_PLUGINS "\n";
  s += "options: " SMD_BUILD_OPTIONS "\n";
  return s;
}

}  // namespace smdtools
