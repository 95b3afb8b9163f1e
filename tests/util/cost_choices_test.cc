// The automatic choice and its predicted cost over a grid of collectives,
// sizes, communicator shapes and two cost models (the defaults and a
// calibrated-looking one), against the table recorded in
// cost_choices.golden: a change that moves code around must leave every
// choice and prediction as it was. A change meant to alter predictions
// rewrites the table (SMD_COST_GOLDEN_WRITE=1 with this test) and shows
// the difference in its commit.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/coll/select/cost_model.h"
#include "core/coll/select/registry.h"
#include "registry_shapes.h"

using namespace smd;

namespace {

struct NamedShape {
  const char *name;
  CommShape shape;
};

CommShape shape(int nodes, int max_local, int min_local, bool node_major = true) {
  CommShape s = shapes::node_shape(nodes, max_local, min_local, node_major);
  s.arena = s.cma = nodes == 1;
  return s;
}

CollArgs call(CollKind kind, size_t bytes, int ranks) {
  CollArgs a = shapes::float_call(kind, bytes);
  if (per_rank_blocks(kind) || kind == CollKind::kAlltoallv) {
    auto l = std::make_shared<BlockLayout>();
    for (int r = 0; r < ranks; ++r) {
      l->counts.push_back(a.count + size_t(r));  // uneven: the largest block counts
      l->displs.push_back(r == 0 ? 0 : l->displs.back() + l->counts[size_t(r) - 1]);
    }
    finish_layout(*l);
    a.blocks = l;
  }
  return a;
}

CostModel calibrated() {
  CostModel m;
  m.arena = {0.8, 14.3};
  m.local = {3.1, 6.7};
  m.net = {11.0, 3.2};
  m.cma = {2.2, 9.5};
  m.reduce_gbps = 5.5;
  return m;
}

// One line per (model, shape, collective, size): the chosen row and its
// predicted microseconds to nine significant digits.
std::string choices_table() {
  const NamedShape shapes[] = {
      {"1x2", shape(1, 2, 2)},
      {"1x5", shape(1, 5, 5)},
      {"4x1", shape(4, 1, 1)},
      {"3x1", shape(3, 1, 1)},
      {"2x4", shape(2, 4, 4)},
      {"3x3+2", shape(3, 3, 2)},
      {"2x2-mixed", shape(2, 2, 2, false)},
      {"16x8", shape(16, 8, 8)},
  };
  const size_t sizes[] = {8, 4096, size_t(1) << 20, size_t(64) << 20};
  const std::pair<const char *, CostModel> models[] = {{"defaults", CostModel{}},
                                                       {"calibrated", calibrated()}};
  std::ostringstream out;
  for (const auto &[model_name, model] : models)
    for (const NamedShape &s : shapes)
      for (int k = 0; k < int(CollKind::kCount); ++k)
        for (size_t b : sizes) {
          CollKind kind = CollKind(k);
          if (kind == CollKind::kBarrier && b != sizes[0]) continue;
          AlgoChoice c = choose(call(kind, b, s.shape.size), Algo::kAuto, s.shape, model);
          char cost[32];
          std::snprintf(cost, sizeof cost, "%.9g", c.cost_us);
          out << model_name << " " << s.name << " " << coll_name(kind) << " " << b << ": "
              << (c.entry ? c.entry->name : "none") << " " << cost << "\n";
        }
  return out.str();
}

TEST(CostChoices, MatchTheRecordedTable) {
  const char *path = std::getenv("SMD_COST_GOLDEN");
  ASSERT_NE(path, nullptr) << "meson passes SMD_COST_GOLDEN";
  std::string now = choices_table();
  if (const char *w = std::getenv("SMD_COST_GOLDEN_WRITE"); w && std::string(w) == "1") {
    std::ofstream(path) << now;
    GTEST_SKIP() << "wrote " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot read " << path;
  std::stringstream recorded;
  recorded << in.rdbuf();
  std::istringstream want(recorded.str()), got(now);
  std::string w, g;
  int line = 0, differing = 0;
  while (true) {
    bool more_w = bool(std::getline(want, w)), more_g = bool(std::getline(got, g));
    if (!more_w && !more_g) break;
    ++line;
    if (w != g && ++differing <= 20)
      ADD_FAILURE() << "line " << line << ": recorded '" << (more_w ? w : "") << "', now '"
                    << (more_g ? g : "") << "'";
  }
  EXPECT_EQ(differing, 0) << "choices or predictions moved; see above";
  EXPECT_GT(line, 500);
}

}  // namespace
