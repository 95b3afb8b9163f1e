// The cost model's parameters as text: SMD_TUNING_FILE read and written
// (smd-bench --tune), apart from the model itself so that tools can show
// the values in effect without the collective engine.
#include <cmath>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "core/coll/calibrate/calibration.h"
#include "core/coll/select/cost_model.h"
#include "core/util/error.h"
#include "core/util/params.h"
#include "core/util/safe_file.h"

namespace smd {

namespace {

// The tuning file's keys, in the order to_text() writes them.
const char *const kKeys[] = {"arena_alpha_us", "arena_gbps",   "local_alpha_us",
                             "local_gbps",     "cma_alpha_us", "cma_gbps",
                             "net_alpha_us",   "net_gbps",     "reduce_gbps"};

constexpr double kMinGbps = 1e-3, kMaxGbps = 1e6, kMaxAlphaUs = 1e6;
// A tuning file is a few lines; anything larger is not one.
constexpr size_t kMaxTuningFileBytes = 64 * 1024;

double *field(CostModel &m, const std::string &key) {
  if (key == "arena_alpha_us") return &m.arena.alpha_us;
  if (key == "arena_gbps") return &m.arena.gbps;
  if (key == "local_alpha_us") return &m.local.alpha_us;
  if (key == "local_gbps") return &m.local.gbps;
  if (key == "cma_alpha_us") return &m.cma.alpha_us;
  if (key == "cma_gbps") return &m.cma.gbps;
  if (key == "net_alpha_us") return &m.net.alpha_us;
  if (key == "net_gbps") return &m.net.gbps;
  if (key == "reduce_gbps") return &m.reduce_gbps;
  return nullptr;
}

}  // namespace

CostModel CostModel::parse(const std::string &text, const std::string &source) {
  return parse(text, source, CostModel{});
}

CostModel CostModel::parse(const std::string &text, const std::string &source,
                           const CostModel &base) {
  CostModel m = base;
  m.source = source;
  std::istringstream in(text);
  std::string line;
  for (int no = 1; std::getline(in, line); ++no) {
    size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    size_t eq = line.find('=');
    std::string key = line.substr(0, eq == std::string::npos ? line.size() : eq);
    key.erase(0, key.find_first_not_of(" \t"));
    key.erase(key.find_last_not_of(" \t") + 1);
    if (key.empty() && eq == std::string::npos) continue;
    double *f = field(m, key);
    if (eq == std::string::npos || f == nullptr) {
      std::string keys;
      for (const char *k : kKeys) keys += (keys.empty() ? "" : ", ") + std::string(k);
      fail(SMD_ERR_INVALID_ARGUMENT, "%s line %d: expected 'key = value' with key one of %s",
           source.c_str(), no, keys.c_str());
    }
    std::string value = line.substr(eq + 1);
    char *end = nullptr;
    double v = std::strtod(value.c_str(), &end);
    while (end && (*end == ' ' || *end == '\t' || *end == '\r')) ++end;
    // Ranges no link has left: a latency of 1e300 us or a denormal
    // bandwidth would make every prediction infinite.
    bool gbps = key.find("gbps") != std::string::npos;
    double lo = gbps ? kMinGbps : 0, hi = gbps ? kMaxGbps : kMaxAlphaUs;
    if (end == value.c_str() || (end && *end != '\0') || !(v >= lo && v <= hi))
      fail(SMD_ERR_INVALID_ARGUMENT, "%s line %d: '%s' is not a valid value for %s (%g to %g)",
           source.c_str(), no, value.c_str(), key.c_str(), lo, hi);
    *f = v;
    m.keys_from_file.push_back(key);
  }
  return m;
}

CostModel CostModel::load(const Calibration *calibration, const LinkCost *network) {
  CostModel base;
  if (calibration && calibration->measured()) {
    apply_calibration(*calibration, base);
    base.source = "calibration (" + calibration->origin + ")";
  }
  if (network) {
    base.net = *network;
    base.source = calibration && calibration->measured() ? base.source + " and the network's"
                                                         : std::string("the network's measurement");
  }
  CostModel defaults;
  auto now = base.entries(), before = defaults.entries();
  for (size_t i = 0; i < now.size(); ++i)
    if (now[i].second != before[i].second) base.keys_measured.push_back(now[i].first);
  std::optional<std::string> path = param_env("SMD_TUNING_FILE");
  if (!path) return base;
  std::string why;
  std::optional<std::string> text = read_tuning_file(*path, &why);
  if (!text) fail(SMD_ERR_INVALID_ARGUMENT, "SMD_TUNING_FILE: cannot read %s", why.c_str());
  return parse(*text, "SMD_TUNING_FILE " + *path, base);
}

std::optional<std::string> CostModel::read_tuning_file(const std::string &path, std::string *why) {
  // A regular file of bounded size: a FIFO would hang init, /dev/zero
  // would be read until memory runs out.
  FileRules rules;
  rules.max_bytes = kMaxTuningFileBytes;
  return read_bounded_file(path, rules, why);
}

std::vector<std::pair<std::string, double>> CostModel::entries() const {
  std::vector<std::pair<std::string, double>> out;
  CostModel copy = *this;
  for (const char *k : kKeys) out.emplace_back(k, *field(copy, k));
  return out;
}

std::string CostModel::to_text() const {
  std::string text;
  for (const auto &[key, value] : entries()) text += format("%s = %.3f\n", key.c_str(), value);
  return text;
}

}  // namespace smd
