// Every plugin file smd would consider, opened (never initialised) to say
// whether it loads and what it declares: for smd-info's plugins, params
// and doctor commands, and for the check of the environment at init.
#pragma once

#include <smd_transport.h>

#include <memory>
#include <string>
#include <vector>

#include "core/plugin/plugin_loader.h"

namespace smd {

struct PluginParamDecl {
  std::string name, type, default_value, doc;
};

struct SurveyedPlugin {
  std::string name;  // from the file name: "ucx"
  std::string path;
  bool shadowed = false;                 // an earlier file of the same name wins
  std::shared_ptr<LoadedPlugin> plugin;  // null: it does not load
  std::string error;                     // why it does not load
  std::vector<PluginParamDecl> params;   // its table's params entry
};

// Every file of plugin_files(), in search order.
std::vector<SurveyedPlugin> survey_plugins();

// The variable names every loadable plugin declares.
std::vector<std::string> plugin_param_names();

}  // namespace smd
