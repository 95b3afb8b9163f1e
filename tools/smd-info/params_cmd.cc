// smd-info params: the core's parameter registry (compiled into smd-info:
// the registry is not part of the public ABI), then the variables each
// plugin found declares in its table (the params entry), with the
// plugin's name, each with the value in effect in this environment and
// where it comes from. Plugins are found as libsmd finds them (the
// plugin loader is compiled in too) and loaded, never initialised.
#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "commands.h"
#include "tool_support/core_interface.h"
#include "text_out.h"

namespace smdinfo {
namespace {

struct Row {
  std::string name, type, default_value, source, doc, value, origin;
};

std::vector<Row> all_rows(std::vector<std::string> *unusable) {
  std::vector<Row> rows;
  for (const smd::ParamDef &p : smd::all_params())
    rows.push_back({p.name, p.type, p.default_value, "core", p.doc, smd::param_string(p.name),
                    smd::param_origin_name(smd::param_origin(p.name))});
  // The node's calibration as a job started now would find it: the per-boot
  // cache file (smd-info measures nothing: that takes two ranks).
  std::optional<smd::Calibration> cal;
  std::string cal_origin = "default (no cached calibration)";
  try {
    if (smd::calibrate_mode() == smd::CalibrateMode::kOff)
      cal_origin = "default (SMD_CALIBRATE=off)";
    else cal = smd::read_calibration(smd::calibration_cache_path(), smd::calibration_key());
  } catch (const smd::Error &e) {
    unusable->push_back(e.message());
  }
  smd::Calibration shown = cal ? *cal : smd::Calibration{};
  for (const auto &[key, value] : shown.entries())
    rows.push_back({"calibration: " + key, "float", "0", "core",
                    "Measured by the node's calibration (SMD_CALIBRATE); 0: not measured.",
                    smd::format("%g", value),
                    cal ? cal->origin + " " + smd::calibration_cache_path() : cal_origin});
  // The link costs of the algorithm choice: defaults, the calibration's,
  // or SMD_TUNING_FILE's.
  smd::CostModel defaults, costs;
  try {
    costs = smd::CostModel::load(cal ? &*cal : nullptr);
  } catch (const smd::Error &e) {
    unusable->push_back(e.message());
  }
  auto default_of = defaults.entries();
  auto in_effect = costs.entries();
  for (size_t i = 0; i < in_effect.size(); ++i) {
    const auto &[key, value] = in_effect[i];
    auto named = [&key = key](const std::vector<std::string> &keys) {
      return std::find(keys.begin(), keys.end(), key) != keys.end();
    };
    std::string origin = named(costs.keys_from_file)  ? "tuning file"
                         : named(costs.keys_measured) ? "calibration (" + shown.origin + ")"
                                                      : "default";
    rows.push_back({"tuning: " + key, "float", smd::format("%g", default_of[i].second), "core",
                    "Link cost of the automatic choice of algorithms (the node's calibration and "
                    "SMD_TUNING_FILE set it).",
                    smd::format("%g", value), origin});
  }
  for (const smd::SurveyedPlugin &s : smd::survey_plugins()) {
    if (s.shadowed) continue;
    if (!s.plugin) unusable->push_back(s.error);
    for (const smd::PluginParamDecl &p : s.params) {
      // The plugins read their variables through the host's get_param:
      // the environment as it is, else their own default.
      const char *env = getenv(p.name.c_str());
      bool set = env && *env;
      rows.push_back({p.name, p.type, p.default_value, s.name, p.doc, set ? env : p.default_value,
                      smd::param_origin_name(set ? smd::ParamOrigin::kEnvironment
                                                 : smd::ParamOrigin::kDefault)});
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
      printf(
          "  {\"name\": %s, \"type\": %s, \"default\": %s, \"value\": %s, \"origin\": %s, "
          "\"source\": %s, \"doc\": %s}%s\n",
          json_string(r.name).c_str(), json_string(r.type).c_str(),
          json_string(r.default_value).c_str(), json_string(r.value).c_str(),
          json_string(r.origin).c_str(), json_string(r.source).c_str(), json_string(r.doc).c_str(),
          i + 1 < rows.size() ? "," : "");
    }
    puts("]");
  } else {
    std::vector<std::vector<std::string>> table = {
        {"variable", "value", "origin", "type", "default", "from", "meaning"}};
    auto shown = [](const std::string &v) { return v.empty() ? std::string("(unset)") : v; };
    for (const Row &r : rows)
      table.push_back(
          {r.name, shown(r.value), r.origin, r.type, shown(r.default_value), r.source, r.doc});
    for (const std::string &line : align_columns(table)) puts(line.c_str());
  }
  // Not an error: a plugin that does not load here (a library missing)
  // still has variables; say which ones could not be asked.
  for (const std::string &why : unusable) fprintf(stderr, "smd-info: %s\n", why.c_str());
  return 0;
}

}  // namespace smdinfo
