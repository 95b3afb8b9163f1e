// The settings every rank of a job must share, compared once when the world
// communicator is created.
//
// Each rank chooses its algorithms, fusion buffers, pipeline chunks and
// call checks from its own environment; ranks that chose differently would
// wait for messages that never come, until SMD_TIMEOUT. Comparing a digest
// of each such setting first turns that into SMD_ERR_MISMATCH at init, on
// every rank, with the name of the variable.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace smd {

class Comm;

struct SharedSetting {
  const char *name;
  std::string value;  // the value in effect on this rank (the default when unset)
};

// This process's values of the settings that must agree: SMD_ALGO,
// SMD_CHECK, SMD_FUSION_BYTES, SMD_HIER_CHUNK_BYTES, SMD_GPU_IPC,
// SMD_GPU_STAGE_CHUNK_BYTES,
// SMD_CALIBRATE and SMD_TUNING_FILE
// (its contents: two paths to the same numbers agree).
std::vector<SharedSetting> shared_settings();

// The mismatch message for `settings` (this rank's) and every rank's
// digests (digests[r * settings.size() + k]); empty when all agree.
std::string settings_disagreement(const std::vector<SharedSetting> &settings,
                                  const std::vector<uint64_t> &digests, int nranks);

// Collective over the world: throws SMD_ERR_MISMATCH on every rank when
// the ranks' settings differ, these and SMD_GPU_DIRECT; and records in the
// world's Context whether every rank's transports move device memory
// (device_direct.h), ANDed over the ranks by the same exchange.
void check_settings_agree(Comm &world);

}  // namespace smd
