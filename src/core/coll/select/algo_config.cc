#include "core/coll/select/algo_config.h"

#include <cstring>

#include "core/coll/select/registry.h"
#include "core/util/error.h"

namespace smd {
namespace {
constexpr int kKinds = static_cast<int>(CollKind::kCount);
const char *const kCollNames[kKinds] = {
    "allreduce", "allgather", "reduce_scatter", "broadcast",       "reduce",
    "alltoall",  "barrier",   "allgatherv",     "reduce_scatterv", "alltoallv"};
constexpr int kAlgos = static_cast<int>(Algo::kCount);

// The algorithm a name stands for: "auto", or a registry row's name.
Algo algo_from(const std::string &s) {
  if (s == algo_name(Algo::kAuto)) return Algo::kAuto;
  for (const AlgoEntry &e : algo_rows())
    if (s == e.name) return e.algo;
  std::string known = algo_name(Algo::kAuto);
  for (int i = 1; i < kAlgos; ++i) known += std::string(", ") + algo_name(static_cast<Algo>(i));
  fail(SMD_ERR_INVALID_ARGUMENT, "SMD_ALGO: unknown algorithm '%s' (known: %s)", s.c_str(),
       known.c_str());
}

std::string trim(const std::string &s) {
  size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}
}  // namespace

const char *coll_name(CollKind k) { return kCollNames[static_cast<int>(k)]; }
const char *algo_name(Algo a) {
  if (a == Algo::kAuto) return "auto";
  for (const AlgoEntry &e : algo_rows())
    if (e.algo == a) return e.name;
  return "?";
}

AlgoConfig AlgoConfig::parse(const std::string &text) {
  AlgoConfig c;
  std::string t = trim(text);
  if (t.empty() || t == "auto") return c;
  if (t.find('=') == std::string::npos && t.find(',') == std::string::npos) {
    Algo a = algo_from(t);
    // One name for all: it applies where the collective has it.
    for (int k = 0; k < kKinds; ++k)
      if (algo_supported(static_cast<CollKind>(k), a)) c.forced[k] = a;
    return c;
  }
  size_t pos = 0;
  while (pos <= t.size()) {
    size_t end = t.find(',', pos);
    if (end == std::string::npos) end = t.size();
    std::string item = trim(t.substr(pos, end - pos));
    pos = end + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos)
      fail(SMD_ERR_INVALID_ARGUMENT, "SMD_ALGO: '%s' should be collective=algorithm", item.c_str());
    std::string coll = trim(item.substr(0, eq)), algo = trim(item.substr(eq + 1));
    int k = 0;
    while (k < kKinds && coll != kCollNames[k]) ++k;
    if (k == kKinds)
      fail(SMD_ERR_INVALID_ARGUMENT, "SMD_ALGO: unknown collective '%s'", coll.c_str());
    Algo a = algo_from(algo);
    if (!algo_supported(static_cast<CollKind>(k), a))
      fail(SMD_ERR_INVALID_ARGUMENT, "SMD_ALGO: %s has no '%s' algorithm", coll.c_str(),
           algo.c_str());
    c.forced[k] = a;
  }
  return c;
}

std::string AlgoConfig::describe() const {
  std::string s;
  for (int k = 0; k < kKinds; ++k) {
    if (!s.empty()) s += ",";
    s += kCollNames[k];
    s += "=";
    s += algo_name(forced[k]);
  }
  return s;
}

}  // namespace smd
