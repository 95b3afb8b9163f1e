// smd-info params: the core's parameter registry (compiled into smd-info:
// the registry is not part of the public ABI), then the variables each
// plugin found declares in its table (the params entry), with the
// plugin's name. Plugins are found as libsmd finds them (the plugin
// loader is compiled in too) and loaded, never initialised.
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "core/plugin/plugin_loader.h"
#include "core/util/error.h"
#include "core/util/params.h"
#include "text_out.h"

namespace smdinfo {
namespace {

struct Row {
  std::string name, type, default_value, source, doc;
};

std::vector<Row> all_rows(std::vector<std::string> *unusable) {
  std::vector<Row> rows;
  for (const smd::ParamDef &p : smd::all_params())
    rows.push_back({p.name, p.type, p.default_value, "core", p.doc});
  for (const std::string &name : smd::discover_plugins()) {
    try {
      auto plugin = smd::load_plugin(name);
      const smd_transport_v1_t *t = plugin->table;
      if (!SMD_TRANSPORT_HAS(t, smd_transport_v1_t, params) || !t->params) continue;
      for (const smd_transport_param_t *p = t->params; p->name; ++p)
        rows.push_back({p->name, p->type, p->default_value, plugin->name, p->doc});
    } catch (const smd::Error &e) {
      unusable->push_back(e.message());
    }
  }
  return rows;
}

}  // namespace

int run_params(const Options &o) {
  std::vector<std::string> unusable;
  std::vector<Row> rows = all_rows(&unusable);
  if (o.json) {
    puts("[");
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row &r = rows[i];
      printf("  {\"name\": %s, \"type\": %s, \"default\": %s, \"source\": %s, \"doc\": %s}%s\n",
             json_string(r.name).c_str(), json_string(r.type).c_str(),
             json_string(r.default_value).c_str(), json_string(r.source).c_str(),
             json_string(r.doc).c_str(), i + 1 < rows.size() ? "," : "");
    }
    puts("]");
  } else {
    std::vector<std::vector<std::string>> table = {{"variable", "type", "default", "from", "meaning"}};
    for (const Row &r : rows)
      table.push_back({r.name, r.type, r.default_value.empty() ? "(unset)" : r.default_value,
                       r.source, r.doc});
    for (const std::string &line : align_columns(table)) puts(line.c_str());
  }
  // Not an error: a plugin that does not load here (a library missing)
  // still has variables; say which ones could not be asked.
  for (const std::string &why : unusable) fprintf(stderr, "smd-info: %s\n", why.c_str());
  return 0;
}

}  // namespace smdinfo
