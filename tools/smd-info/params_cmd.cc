// smd-info params: the parameter registry of the core (compiled into
// smd-info: the registry is not part of the public ABI).
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "core/util/params.h"
#include "text_out.h"

namespace smdinfo {

int run_params(const Options &) {
  std::vector<std::vector<std::string>> rows = {{"variable", "type", "default", "meaning"}};
  for (const smd::ParamDef &p : smd::all_params())
    rows.push_back({p.name, p.type, *p.default_value ? p.default_value : "(unset)", p.doc});
  for (const std::string &line : align_columns(rows)) puts(line.c_str());
  return 0;
}

}  // namespace smdinfo
