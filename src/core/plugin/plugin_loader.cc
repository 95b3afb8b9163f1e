#include "core/plugin/plugin_loader.h"

#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "core/plugin/signal_guard.h"
#include "core/util/error.h"
#include "core/util/log.h"
#include "core/util/params.h"
#include "smd_build_config.h"

namespace smd {
namespace {

constexpr const char *kPrefix = "libsmd-transport-";
constexpr const char *kSuffix = ".so";

bool ends_with(const std::string &s, const char *suffix) {
  size_t n = strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

bool is_dir(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string basename_of(const std::string &p) {
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

bool is_file(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string dir_of(const char *file) {
  // Absolute, so the search does not depend on the current directory.
  char *real = realpath(file, nullptr);
  std::string p = real ? real : file;
  free(real);
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? "" : p.substr(0, slash);
}

// The folder of the libsmd.so loaded in this process, if any: a tool that
// compiles parts of the core in (smd-info) and links libsmd finds the
// plugins libsmd would find.
std::string libsmd_dir() {
  std::string found;
  dl_iterate_phdr(
      [](struct dl_phdr_info *info, size_t, void *out) {
        const char *name = info->dlpi_name ? strrchr(info->dlpi_name, '/') : nullptr;
        if (!name || strncmp(name + 1, "libsmd.so", 9) != 0) return 0;
        *static_cast<std::string *>(out) = dir_of(info->dlpi_name);
        return 1;
      },
      &found);
  return found;
}

// The folder libsmd (or the executable linking the core statically) lives in.
std::string self_dir() {
  std::string lib = libsmd_dir();
  if (!lib.empty()) return lib;
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&plugin_search_dirs), &info) && info.dli_fname)
    return dir_of(info.dli_fname);
  return "";
}

// Entries required in every v1 table (optional ones may be NULL).
struct Required {
  const char *name;
  size_t offset;
};
#define SMD_REQ(f) \
  { #f, offsetof(smd_transport_v1_t, f) }
const Required kRequired[] = {
    SMD_REQ(init),       SMD_REQ(finalize),     SMD_REQ(get_address),    SMD_REQ(connect),
    SMD_REQ(disconnect), SMD_REQ(mem_register), SMD_REQ(mem_deregister), SMD_REQ(isend),
    SMD_REQ(irecv),      SMD_REQ(test),         SMD_REQ(cancel),         SMD_REQ(progress),
};
#undef SMD_REQ

std::string validate(const smd_transport_v1_t *t) {
  if (!t) return "its entry function returned NULL";
  size_t min_size = offsetof(smd_transport_v1_t, progress) + sizeof(t->progress);
  if (t->abi_version != SMD_TRANSPORT_ABI_VERSION)
    return format("plugin ABI version %u, this smd needs %d", t->abi_version,
                  SMD_TRANSPORT_ABI_VERSION);
  if (t->struct_size < min_size)
    return format("table of %zu bytes is smaller than the v1 minimum %zu", t->struct_size,
                  min_size);
  if (!t->name || !*t->name) return "table has no name";
  for (const auto &r : kRequired) {
    void *fn;
    memcpy(&fn, reinterpret_cast<const char *>(t) + r.offset, sizeof fn);
    if (!fn) return format("required entry '%s' is NULL", r.name);
  }
  auto has = [&](size_t off) { return t->struct_size >= off + sizeof(void *); };
  auto set = [&](size_t off) {
    void *fn;
    memcpy(&fn, reinterpret_cast<const char *>(t) + off, sizeof fn);
    return fn != nullptr;
  };
  if (t->caps & SMD_TRANSPORT_CAP_RMA) {
    size_t a = offsetof(smd_transport_v1_t, mem_pack), b = offsetof(smd_transport_v1_t, iget);
    if (!has(b) || !set(a) || !set(b)) return "declares CAP_RMA but mem_pack/iget are missing";
  }
  if (t->caps & SMD_TRANSPORT_CAP_SEGMENTS) {
    size_t a = offsetof(smd_transport_v1_t, segment_create),
           b = offsetof(smd_transport_v1_t, segment_attach),
           c = offsetof(smd_transport_v1_t, segment_release);
    if (!has(c) || !set(a) || !set(b) || !set(c))
      return "declares CAP_SEGMENTS but segment_create/attach/release are missing";
  }
  if (SMD_TRANSPORT_HAS(t, smd_transport_v1_t, params) && t->params) {
    size_t n = 0;
    for (const smd_transport_param_t *p = t->params; p->name; ++p, ++n) {
      if (n >= 256) return "its parameter list has no end (256 entries without a NULL name)";
      if (strncmp(p->name, "SMD_", 4) != 0 || !p->type || !p->default_value || !p->doc)
        return format("parameter '%s' needs an SMD_ name, a type, a default and a doc", p->name);
    }
  }
  return "";
}

std::mutex g_mu;
// Loaded plugins stay cached (weakly) so several worlds share one dlopen.
std::unordered_map<std::string, std::weak_ptr<LoadedPlugin>> g_cache;

}  // namespace

std::string libsmd_folder() { return self_dir(); }

LoadedPlugin::~LoadedPlugin() {
  if (handle) dlclose(handle);
}

std::vector<std::string> plugin_search_dirs() {
  std::vector<std::string> dirs;
  auto add = [&](const std::string &d) {
    if (!d.empty() && std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
  };
  if (auto path = param_env("SMD_PLUGIN_PATH")) {
    size_t pos = 0;
    while (pos <= path->size()) {
      size_t end = path->find(':', pos);
      if (end == std::string::npos) end = path->size();
      add(path->substr(pos, end - pos));
      pos = end + 1;
    }
  }
  std::string self = self_dir();
  if (!self.empty()) {
    add(self + "/smd");
    // Build tree: build/src/libsmd.so next to build/src/plugins/<name>/.
    std::string in_tree = self + "/plugins";
    if (DIR *d = opendir(in_tree.c_str())) {
      std::vector<std::string> subs;
      while (dirent *e = readdir(d))
        if (e->d_name[0] != '.' && is_dir(in_tree + "/" + e->d_name))
          subs.push_back(in_tree + "/" + e->d_name);
      closedir(d);
      std::sort(subs.begin(), subs.end());
      for (auto &s : subs) add(s);
    }
  }
  add(SMD_PLUGIN_INSTALL_DIR);
  return dirs;
}

std::shared_ptr<LoadedPlugin> open_plugin_file(const std::string &path) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (auto it = g_cache.find(path); it != g_cache.end())
    if (auto p = it->second.lock()) return p;
  if (!is_file(path)) fail(SMD_ERR_PLUGIN, "plugin %s: no such file", path.c_str());
  dlerror();
  // Never unloaded (RTLD_NODELETE): transport libraries load modules of
  // their own (libfabric's providers, UCX's transports), start threads and
  // keep thread-local storage; unloaded mid-process they leave stale
  // thread-local blocks behind (LeakSanitizer's exit scan crashed on them
  // after auto selection dropped an unusable efa plugin).
  void *h;
  {
    SignalGuard signals("plugin " + path);  // libraries' constructors run here
    h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  }
  if (!h) fail(SMD_ERR_PLUGIN, "plugin %s: cannot load: %s", path.c_str(), dlerror());
  void *sym = dlsym(h, SMD_TRANSPORT_ENTRY_V1);
  if (!sym) {
    dlclose(h);
    fail(SMD_ERR_PLUGIN, "plugin %s: not an smd transport plugin (no symbol %s)", path.c_str(),
         SMD_TRANSPORT_ENTRY_V1);
  }
  smd_transport_entry_v1_t entry;
  memcpy(&entry, &sym, sizeof entry);
  const smd_transport_v1_t *table = entry();
  std::string why = validate(table);
  if (!why.empty()) {
    dlclose(h);
    fail(SMD_ERR_PLUGIN, "plugin %s: rejected: %s", path.c_str(), why.c_str());
  }
  auto p = std::make_shared<LoadedPlugin>();
  p->name = table->name;
  p->path = path;
  p->handle = h;
  p->table = table;
  g_cache[path] = p;
  SMD_INFO("plugin", "loaded %s transport from %s (%s)", p->name.c_str(), path.c_str(),
           table->description ? table->description : "");
  return p;
}

std::shared_ptr<LoadedPlugin> load_plugin(const std::string &name_or_path) {
  if (name_or_path.find('/') != std::string::npos || ends_with(name_or_path, kSuffix))
    return open_plugin_file(name_or_path);
  std::string file = std::string(kPrefix) + name_or_path + kSuffix;
  std::string tried;
  for (const auto &entry : plugin_search_dirs()) {
    // An SMD_PLUGIN_PATH entry may name a plugin file instead of a folder.
    std::string path = is_file(entry) ? entry : entry + "/" + file;
    if (is_file(entry) && basename_of(entry) != file) continue;
    if (!is_file(path)) continue;
    try {
      return open_plugin_file(path);
    } catch (const Error &e) {
      SMD_WARN("plugin", "%s", e.what());
      tried += "\n  " + e.message();
    }
  }
  if (tried.empty()) {
    std::string dirs;
    for (const auto &d : plugin_search_dirs()) dirs += (dirs.empty() ? "" : ", ") + d;
    fail(SMD_ERR_PLUGIN, "transport plugin '%s' not found: no %s in %s (set SMD_PLUGIN_PATH)",
         name_or_path.c_str(), file.c_str(), dirs.c_str());
  }
  fail(SMD_ERR_PLUGIN, "transport plugin '%s' could not be used:%s", name_or_path.c_str(),
       tried.c_str());
}

std::string plugin_name_of_file(const std::string &path) {
  std::string file = basename_of(path);
  if (file.rfind(kPrefix, 0) != 0 || !ends_with(file, kSuffix)) return "";
  return file.substr(strlen(kPrefix), file.size() - strlen(kPrefix) - strlen(kSuffix));
}

std::vector<std::string> plugin_files() {
  std::vector<std::string> files;
  for (const auto &entry : plugin_search_dirs()) {
    std::vector<std::string> found;
    if (is_file(entry)) {
      found.push_back(entry);
    } else if (DIR *d = opendir(entry.c_str())) {
      while (dirent *e = readdir(d)) found.push_back(entry + "/" + e->d_name);
      closedir(d);
    }
    std::sort(found.begin(), found.end());
    for (auto &f : found)
      if (!plugin_name_of_file(f).empty() && is_file(f)) files.push_back(f);
  }
  return files;
}

std::vector<std::string> discover_plugins() {
  std::vector<std::string> names;
  for (const std::string &f : plugin_files()) {
    std::string n = plugin_name_of_file(f);
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  }
  return names;
}

}  // namespace smd
