#include "core/plugin/plugin_survey.h"

#include <algorithm>

#include "core/util/error.h"

namespace smd {

std::vector<SurveyedPlugin> survey_plugins() {
  std::vector<SurveyedPlugin> out;
  std::vector<std::string> seen;
  for (const std::string &path : plugin_files()) {
    SurveyedPlugin s;
    s.name = plugin_name_of_file(path);
    s.path = path;
    s.shadowed = std::find(seen.begin(), seen.end(), s.name) != seen.end();
    seen.push_back(s.name);
    try {
      s.plugin = open_plugin_file(path);
      const smd_transport_v1_t *t = s.plugin->table;
      if (SMD_TRANSPORT_HAS(t, smd_transport_v1_t, params) && t->params)
        for (const smd_transport_param_t *p = t->params; p->name; ++p)
          s.params.push_back({p->name, p->type ? p->type : "",
                              p->default_value ? p->default_value : "", p->doc ? p->doc : ""});
    } catch (const Error &e) {
      s.error = e.message();
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::string> plugin_param_names() {
  std::vector<std::string> names;
  for (const SurveyedPlugin &s : survey_plugins())
    for (const PluginParamDecl &p : s.params) names.push_back(p.name);
  return names;
}

}  // namespace smd
