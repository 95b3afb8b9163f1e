#include "core/coll/select/algo_config.h"

#include <cstring>

#include "core/util/error.h"

namespace smd {
namespace {
constexpr int kKinds = static_cast<int>(CollKind::kCount);
const char *const kCollNames[kKinds] = {
    "allreduce", "allgather", "reduce_scatter", "broadcast",       "reduce",
    "alltoall",  "barrier",   "allgatherv",     "reduce_scatterv", "alltoallv"};
const char *const kAlgoNames[] = {"auto", "direct",   "ring",         "rd",
                                  "tree", "pairwise", "hierarchical", "cma"};
constexpr int kAlgos = static_cast<int>(sizeof kAlgoNames / sizeof kAlgoNames[0]);

Algo algo_from(const std::string &s) {
  for (int i = 0; i < kAlgos; ++i)
    if (s == kAlgoNames[i]) return static_cast<Algo>(i);
  std::string known = kAlgoNames[0];
  for (int i = 1; i < kAlgos; ++i) known += std::string(", ") + kAlgoNames[i];
  fail(SMD_ERR_INVALID_ARGUMENT, "SMD_ALGO: unknown algorithm '%s' (known: %s)", s.c_str(),
       known.c_str());
}

std::string trim(const std::string &s) {
  size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}
}  // namespace

const char *coll_name(CollKind k) { return kCollNames[static_cast<int>(k)]; }
const char *algo_name(Algo a) { return kAlgoNames[static_cast<int>(a)]; }

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
    s += kAlgoNames[static_cast<int>(forced[k])];
  }
  return s;
}

}  // namespace smd
