// The only file of smd-sim that uses the core, through tool_support/core_interface.h.
#include "engine_adapter.h"

#include <smd_transport.h>

#include <cmath>
#include <cstdio>

#include "tool_support/core_interface.h"

namespace smdsim {

struct Engine::Model {
  smd::CostModel cost;
};

namespace {

std::string tuning_line(const char *key, double v) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s = %.6g\n", key, v);
  return buf;
}

bool datatype_of(int element_bytes, smd_datatype_t *d) {
  switch (element_bytes) {
    case 1: *d = SMD_UINT8; return true;
    case 2: *d = SMD_FLOAT16; return true;
    case 4: *d = SMD_FLOAT32; return true;
    case 8: *d = SMD_FLOAT64; return true;
    default: return false;
  }
}

}  // namespace

Engine::Engine(const EngineLinks &l) : model_(std::make_unique<Model>()) {
  std::string text;
  auto link = [&](const char *name, const LinkParams &p) {
    text += tuning_line((std::string(name) + "_alpha_us").c_str(), p.latency_us);
    text += tuning_line((std::string(name) + "_gbps").c_str(), p.gbytes_per_s);
  };
  link("arena", l.arena);
  link("local", l.local);
  link("cma", l.cma);
  link("net", l.net);
  text += tuning_line("reduce_gbps", l.reduce_gbytes_per_s);
  // Round-tripped through the engine's parser: what a real run given
  // tuning_text() as SMD_TUNING_FILE would hold, to the digit.
  smd::CostModel first = smd::CostModel::parse(text, "smd-sim");
  model_->cost = smd::CostModel::parse(first.to_text(), "smd-sim");
}

Engine::~Engine() = default;

std::string Engine::tuning_text() const { return model_->cost.to_text(); }

namespace {

// The call and communicator of choose() and candidates(); false with
// *error set on what the engine could not be asked.
bool engine_call(const std::string &collective, double count, int element_bytes,
                 const EngineShape &shape, smd::CollArgs *a, smd::CommShape *s,
                 std::string *error) {
  bool known = false;
  for (int k = 0; k < int(smd::CollKind::kCount); ++k)
    if (collective == smd::coll_name(smd::CollKind(k))) {
      a->kind = smd::CollKind(k);
      known = true;
    }
  if (!known) {
    *error = "unknown collective '" + collective + "'";
    return false;
  }
  if (a->kind == smd::CollKind::kAllgatherv || a->kind == smd::CollKind::kReduceScatterv ||
      a->kind == smd::CollKind::kAlltoallv) {
    *error = collective + ": the v-collectives' cost needs every rank's block; not simulated";
    return false;
  }
  if (!datatype_of(element_bytes, &a->datatype)) {
    *error = "element size must be 1, 2, 4 or 8 bytes";
    return false;
  }
  if (shape.nodes < 1 || shape.ranks_per_node < 1 ||
      double(shape.nodes) * shape.ranks_per_node > smd::kMaxCommRanks) {
    *error = "a world of 1 to " + std::to_string(smd::kMaxCommRanks) + " ranks";
    return false;
  }
  if (!(count >= 0) || count > 1e15) {
    *error = "count out of range";
    return false;
  }
  a->count = size_t(std::llround(count));
  a->memory = shape.device_memory ? smd::MemoryKind::kDevice : smd::MemoryKind::kHost;
  s->nodes = shape.nodes;
  s->size = shape.nodes * shape.ranks_per_node;
  s->max_local = s->min_local = shape.ranks_per_node;
  s->node_major = true;
  // The arena exists only on a communicator within one node (shape_of).
  s->arena = shape.nodes == 1;
  s->cma = s->arena && shape.cma;
  return true;
}

}  // namespace

bool Engine::choose(const std::string &collective, double count, int element_bytes,
                    const EngineShape &shape, EngineChoice *out, std::string *error) const {
  smd::CollArgs a;
  smd::CommShape s;
  if (!engine_call(collective, count, element_bytes, shape, &a, &s, error)) return false;
  if (s.size == 1) {
    *out = {"single", 0};
    return true;
  }
  smd::AlgoChoice c = smd::choose(a, smd::Algo::kAuto, s, model_->cost);
  if (!c.entry) {
    *error = "no algorithm of " + collective + " applies";
    return false;
  }
  *out = {c.entry->name, c.cost_us};
  return true;
}

bool Engine::candidates(const std::string &collective, double count, int element_bytes,
                        const EngineShape &shape, std::vector<EngineChoice> *out,
                        std::string *error) const {
  smd::CollArgs a;
  smd::CommShape s;
  out->clear();
  if (!engine_call(collective, count, element_bytes, shape, &a, &s, error)) return false;
  if (s.size == 1) {
    out->push_back({"single", 0});
    return true;
  }
  // Forced as SMD_ALGO forces it: an algorithm that does not apply falls
  // back to another, which is then not this candidate.
  for (int k = int(smd::Algo::kAuto) + 1; k < int(smd::Algo::kCount); ++k) {
    if (!smd::find_algo(a.kind, smd::Algo(k))) continue;
    smd::AlgoChoice c = smd::choose(a, smd::Algo(k), s, model_->cost);
    if (c.entry && c.entry->algo == smd::Algo(k)) out->push_back({c.entry->name, c.cost_us});
  }
  return true;
}

std::vector<std::string> engine_collectives() {
  std::vector<std::string> names;
  for (int k = 0; k < int(smd::CollKind::kCount); ++k) {
    auto kind = smd::CollKind(k);
    if (kind == smd::CollKind::kAllgatherv || kind == smd::CollKind::kReduceScatterv ||
        kind == smd::CollKind::kAlltoallv)
      continue;
    names.push_back(smd::coll_name(kind));
  }
  return names;
}

TagBudget engine_tag_budget(int ranks) {
  TagBudget b;
  b.max_ranks = smd::kMaxCommRanks;
  b.step_bits = smd::coll_step_bits(ranks);
  b.sequence_bits = 22 - b.step_bits;
  b.transport_tag_bits = SMD_TRANSPORT_TAG_BITS;
  return b;
}

}  // namespace smdsim
