#include "core/coll/agree/settings_agreement.h"

#include <optional>
#include <string>

#include "core/coll/agree/digest_agreement.h"
#include "core/coll/algorithms/device_direct.h"
#include "core/coll/collective.h"
#include "core/coll/select/cost_model.h"
#include "core/comm/communicator.h"
#include "core/comm/context.h"
#include "core/util/error.h"
#include "core/util/fnv1a.h"
#include "core/util/params.h"

namespace smd {

namespace {

std::string env_or_empty(const char *name) { return param_env(name).value_or(""); }

enum class Kind { kString, kNumber, kBool };

// The value in effect (the default when unset, so that "auto" set and
// unset agree; numbers and switches as parsed). A value that does not parse
// is compared as written: it fails where it is used, with its own message.
std::string effective(const char *name, Kind kind) {
  try {
    switch (kind) {
      case Kind::kNumber: return std::to_string(param_int(name));
      case Kind::kBool: return param_bool(name) ? "1" : "0";
      case Kind::kString: break;
    }
    return param_string(name);
  } catch (const Error &) {
    return env_or_empty(name);
  }
}

// The tuning file's contents, which are what choices depend on; a file that
// cannot be read fails later, where it is loaded, with its own message.
std::string tuning_contents() {
  std::string path = env_or_empty("SMD_TUNING_FILE");
  if (path.empty()) return "";
  std::string why;
  std::optional<std::string> text = CostModel::read_tuning_file(path, &why);
  return text ? *text : "unreadable " + path;
}

}  // namespace

std::vector<SharedSetting> shared_settings() {
  return {{"SMD_ALGO", effective("SMD_ALGO", Kind::kString)},
          {"SMD_CHECK", effective("SMD_CHECK", Kind::kString)},
          {"SMD_FUSION_BYTES", effective("SMD_FUSION_BYTES", Kind::kNumber)},
          {"SMD_HIER_CHUNK_BYTES", effective("SMD_HIER_CHUNK_BYTES", Kind::kNumber)},
          // Decides whether a device allreduce reads peers in place or stages.
          {"SMD_GPU_IPC", effective("SMD_GPU_IPC", Kind::kBool)},
          // Decides whether an IPC allreduce runs one-shot or in two phases.
          {"SMD_GPU_IPC_ONESHOT_BYTES", effective("SMD_GPU_IPC_ONESHOT_BYTES", Kind::kNumber)},
          // Decides how many collectives a staged device call runs.
          {"SMD_GPU_STAGE_CHUNK_BYTES", effective("SMD_GPU_STAGE_CHUNK_BYTES", Kind::kNumber)},
          // Decides whether the measured network link prices choices.
          {"SMD_CALIBRATE", effective("SMD_CALIBRATE", Kind::kString)},
          {"SMD_TUNING_FILE", tuning_contents()}};
}

std::string settings_disagreement(const std::vector<SharedSetting> &settings,
                                  const std::vector<uint64_t> &digests, int nranks) {
  const size_t k = settings.size();
  std::string why;
  for (size_t i = 0; i < k; ++i) {
    std::string others;
    int differ = 0;
    for (int r = 1; r < nranks; ++r)
      if (digests[static_cast<size_t>(r) * k + i] != digests[i]) {
        if (differ++ < 4) others += format("%s%d", others.empty() ? "" : ", ", r);
      }
    if (!differ) continue;
    if (differ > 4) others += format(" and %d more", differ - 4);
    bool file = std::string(settings[i].name) == "SMD_TUNING_FILE";
    why += format("%s%s differs between ranks (rank%s %s not as rank 0)", why.empty() ? "" : "; ",
                  settings[i].name, differ > 1 ? "s" : "", others.c_str());
    if (!file) why += format(", here '%s'", settings[i].value.c_str());
  }
  if (why.empty()) return why;
  return why +
         ": every rank must set these alike (or none), or ranks choose different "
         "algorithms and wait for each other until SMD_TIMEOUT";
}

void check_settings_agree(Comm &world) {
  if (world.size() == 1) return;
  std::vector<SharedSetting> settings = shared_settings();
  settings.push_back({"SMD_GPU_DIRECT", device_direct_setting()});
  const size_t k = settings.size();
  // One more digest, not a setting: whether this rank's transports move
  // device memory. Ranks may differ there (a rank alone on its node loads
  // no shm); the world's answer is the AND, which the same exchange gives.
  const bool mine = transports_move_device_memory(world);
  std::vector<uint64_t> digests(k + 1);
  for (size_t i = 0; i < k; ++i) digests[i] = fnv1a64(settings[i].value);
  digests[k] = mine ? 1 : 0;
  // First whether all agree, in ceil(log2 p) steps, so that forming a world
  // of thousands of ranks stays cheap; every rank gets the same answer, so
  // all take one branch. Then, only if some differ, every rank's digests to
  // name the ranks and settings.
  if (digests_agree(world, digests, DigestExchange::kBeforeSettings)) {
    world.ctx().set_device_memory_everywhere(mine);
    return;
  }
  std::vector<uint64_t> all =
      every_members_digests(world, digests, DigestExchange::kBeforeSettings);
  std::vector<uint64_t> compared;
  bool everywhere = true;
  for (int r = 0; r < world.size(); ++r) {
    const uint64_t *row = all.data() + static_cast<size_t>(r) * (k + 1);
    compared.insert(compared.end(), row, row + k);
    everywhere = everywhere && row[k] == 1;
  }
  std::string why = settings_disagreement(settings, compared, world.size());
  if (!why.empty()) fail(SMD_ERR_MISMATCH, "%s", why.c_str());
  world.ctx().set_device_memory_everywhere(everywhere);
}

}  // namespace smd
