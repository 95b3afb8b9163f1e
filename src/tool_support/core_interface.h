// The part of the core the tools use beyond the public ABI, behind one
// header: smd-info's parameter, plugin, calibration, file and GPU readers
// and smd-sim's algorithm registry and cost model. A tool includes this,
// never a core header itself (tests/util/check_layers.py fails otherwise),
// so what the tools depend on is listed here and a core change that
// touches it shows in this file's includes.
#pragma once

// smd-info
#include "core/coll/calibrate/calibration.h"  // Calibration, read_calibration, calibrate_mode
#include "core/coll/select/cost_model.h"      // CostModel (tuning rows, smd-sim's model)
#include "core/gpu/gpu_topology.h"            // gpu::list_gpus, gpu::GpuInfo
#include "core/plugin/plugin_loader.h"        // plugin_search_dirs
#include "core/plugin/plugin_survey.h"        // survey_plugins, SurveyedPlugin
#include "core/util/error.h"                  // Error, format
#include "core/util/params.h"                 // all_params, param_* and their origins
#include "core/util/safe_file.h"              // read_bounded_file, FileRules

// smd-sim
#include "core/coll/select/registry.h"  // choose, find_algo, CollArgs, CommShape
#include "core/comm/tags.h"             // kMaxCommRanks
