// The smd_*_config_init() entry points: each sets the caller's struct to
// the defaults its SMD_*_CONFIG_INIT initializer documents.
#pragma once

#include <smd.h>

#include "core/api/guard.h"
#include "core/api/validate.h"

namespace smd {

template <class Config>
smd_result_t init_config(const char *call, Config *config, const Config &defaults) noexcept {
  return guarded(call, [&] {
    require_out(config, "config");
    *config = defaults;
  });
}

}  // namespace smd
