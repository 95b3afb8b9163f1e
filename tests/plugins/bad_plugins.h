// Where meson.build puts the deliberately broken plugins (bad_plugin.c,
// no_entry.c): BAD_PLUGIN_DIR/libsmd-transport-<name>.so.
#pragma once

#include <string>

namespace smd::test {

// The names of the broken plugins (also their table names, where they
// have a table).
inline constexpr const char *kBadAbi = "bad-abi";
inline constexpr const char *kBadMissingEntry = "bad-missing-entry";
inline constexpr const char *kBadNullTable = "bad-null-table";
inline constexpr const char *kBadInit = "bad-init";
inline constexpr const char *kBadUndefined = "bad-undefined";
inline constexpr const char *kBadSmallTable = "bad-small-table";
inline constexpr const char *kBadCaps = "bad-caps";
inline constexpr const char *kNoEntry = "no-entry";
// A valid table, but a helper is exported beside the entry symbol.
inline constexpr const char *kLeakyExport = "leaky-export";
// Not broken: a v1 plugin built against the first v1 header (bad_plugin.c).
inline constexpr const char *kOldV1 = "old-v1";
// Not broken either: it replaces the process's signal handlers when loaded
// and initialised (as libraries under real transports do).
inline constexpr const char *kSignalGrabber = "signal-grabber";

inline std::string bad_plugin_dir() { return BAD_PLUGIN_DIR; }

inline std::string bad_plugin(const std::string &name) {
  return bad_plugin_dir() + "/libsmd-transport-" + name + ".so";
}

}  // namespace smd::test
