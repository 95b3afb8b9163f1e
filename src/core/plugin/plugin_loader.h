// Finding and loading transport plugins: shared objects named
// libsmd-transport-<name>.so, opened with dlopen and checked against the
// plugin ABI (include/smd_transport.h) before anything else touches them.
#pragma once

#include <smd_transport.h>

#include <memory>
#include <string>
#include <vector>

namespace smd {

struct LoadedPlugin {
  std::string name;  // the table's name
  std::string path;  // the file it came from
  void *handle = nullptr;
  const smd_transport_v1_t *table = nullptr;
  ~LoadedPlugin();
};

// The folder of the libsmd.so in this process (or of the executable that
// links the core statically); other run-time modules (libsmd-gpu.so) are
// looked for beside it.
std::string libsmd_folder();

// Directories searched, in order: SMD_PLUGIN_PATH entries, the folder of
// libsmd itself (<dir>/smd and, in a build tree, <dir>/plugins/<name>),
// then the install directory.
std::vector<std::string> plugin_search_dirs();

// Load the plugin called `name` ("shm") or at a path ending in ".so".
// Throws SMD_ERR_PLUGIN naming every file tried and why it was rejected.
std::shared_ptr<LoadedPlugin> load_plugin(const std::string &name_or_path);

// Open and validate one file (no search). Throws SMD_ERR_PLUGIN with the
// reason (not loadable, missing entry symbol, wrong ABI, missing entries).
std::shared_ptr<LoadedPlugin> open_plugin_file(const std::string &path);

// Every plugin file in the search directories, in search order, those
// shadowed by an earlier file of the same name included.
std::vector<std::string> plugin_files();

// "ucx" for ".../libsmd-transport-ucx.so"; "" for a file of another name.
std::string plugin_name_of_file(const std::string &path);

// Names of every plugin file found in the search directories ("ucx",
// "efa", ...), without loading them, in search order, no duplicates.
std::vector<std::string> discover_plugins();

}  // namespace smd
