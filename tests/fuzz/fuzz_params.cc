// libFuzzer target: the parsers of configuration text. The first byte picks
// one, the rest is the text: an SMD_* value through the parameter registry
// (seconds, integer, boolean), SMD_ALGO, an SMD_TUNING_FILE, a rank-group
// placement and degrees, a CPU list. Bad text must end in smd::Error.
#include <cstdlib>
#include <string>
#include <vector>

#include "core/coll/select/algo_config.h"
#include "core/coll/select/cost_model.h"
#include "core/comm/cpu_binding.h"
#include "core/groups/layout.h"
#include "core/util/error.h"
#include "core/util/params.h"

// SMD_ALGO parsing asks the algorithm registry, whose table links the
// whole engine; here every (collective, algorithm) pair counts as
// supported, except one, so both answers are exercised.
bool smd::algo_supported(CollKind k, Algo a) {
  return !(k == CollKind::kBarrier && a == Algo::kPairwise);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace smd;
  if (size == 0) return 0;
  std::string text(reinterpret_cast<const char *>(data) + 1, size - 1);
  // Environment values end at the first NUL.
  std::string env = text.substr(0, text.find('\0'));
  try {
    switch (data[0] % 7) {
      case 0:
        setenv("SMD_TIMEOUT", env.c_str(), 1);
        if (param_seconds_ms("SMD_TIMEOUT") < 0) abort();
        break;
      case 1:
        setenv("SMD_MASTER_PORT", env.c_str(), 1);
        param_int("SMD_MASTER_PORT");
        break;
      case 2:
        setenv("SMD_STAGE_ADAPT", env.c_str(), 1);
        param_bool("SMD_STAGE_ADAPT");
        break;
      case 3: AlgoConfig::parse(text); break;
      case 4: CostModel::parse(text, "fuzz"); break;
      case 5: {
        // world, tp, pp from the first bytes, the placement after them.
        if (text.size() < 3) break;
        int world = static_cast<uint8_t>(text[0]) + 1;
        int tp = static_cast<int8_t>(text[1]), pp = static_cast<int8_t>(text[2]);
        GroupLayout layout(world, tp, pp, env.size() > 3 ? env.c_str() + 3 : "");
        for (int r = 0; r < world; ++r)
          if (layout.rank_at(layout.coords(r)) != r) abort();
        break;
      }
      case 6: {
        std::vector<int> cpus;
        parse_cpu_list(text, &cpus);
        break;
      }
    }
  } catch (const Error &) {
  }
  return 0;
}
