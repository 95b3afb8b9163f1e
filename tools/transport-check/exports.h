// What a plugin file exports: the defined, visible symbols of its dynamic
// symbol table, read from the ELF file itself. A plugin should export only
// its entry symbols; anything else can be interposed by (or interpose on)
// a symbol of the same name elsewhere in the process.
#pragma once

#include <string>
#include <vector>

namespace tcheck {

// Names of the symbols `path` defines and exports, other than the plugin
// entry symbols (smd_transport_plugin_v*). On a file that cannot be read
// as a 64-bit ELF shared object returns false with the reason in `error`.
bool extra_exports(const std::string &path, std::vector<std::string> *names, std::string *error);

}  // namespace tcheck
