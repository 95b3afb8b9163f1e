// What the sharded-set tests share (sharded_*_test.cc): parameter and
// gradient values every rank can compute, a set registered with them, and
// the configuration the run asks for. SHARDED_HIERARCHICAL_ALLGATHER=0 in
// the environment sets hierarchical_allgather = 0 in every set the tests
// make (the run with the flat ring forced).
#pragma once

#include <gtest/gtest.h>
#include <smd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <set>
#include <random>
#include <string>
#include <vector>

#include "../coll/mp_env.h"

namespace shardedtest {

using mptest::rank;
using mptest::size;
using mptest::world;

// Parameter p's element i: the same on every rank, exact in float32.
inline float init_value(size_t p, size_t i) { return float((p + 1) * 100 + i % 1013) * 0.25f; }
// Rank r's gradient of parameter p, element i.
inline float grad_value(int r, size_t p, size_t i) {
  return float(int(i % 97) - 40 + r * 7 + int(p)) * 0.5f;
}

struct Set {
  smd_sharded_t *set = nullptr;
  std::vector<size_t> counts;
  std::vector<int32_t> ids;
  ~Set() {
    if (set) {
      EXPECT_EQ(smd_sharded_destroy(set), SMD_SUCCESS) << smd_last_error();
    }
  }
};

inline smd_sharded_config_t config(uint64_t max_live = 1000000000, uint64_t threshold = 0) {
  smd_sharded_config_t c;
  EXPECT_EQ(smd_sharded_config_init(&c), SMD_SUCCESS);
  c.max_live_parameters = max_live;
  c.param_persistence_threshold = threshold;
  if (const char *h = std::getenv("SHARDED_HIERARCHICAL_ALLGATHER"))
    c.hierarchical_allgather = std::atoi(h);
  return c;
}

inline void make(Set &s, const smd_sharded_config_t &c, const std::vector<size_t> &counts,
                 smd_comm_t *comm = world()) {
  ASSERT_EQ(smd_sharded_create(comm, &c, &s.set), SMD_SUCCESS) << smd_last_error();
  s.counts = counts;
  for (size_t p = 0; p < counts.size(); ++p) {
    std::vector<float> init(counts[p]);
    for (size_t i = 0; i < counts[p]; ++i) init[i] = init_value(p, i);
    int32_t id = -1;
    ASSERT_EQ(smd_sharded_register(s.set, counts[p], SMD_FLOAT32, init.data(), &id), SMD_SUCCESS)
        << smd_last_error();
    ASSERT_EQ(id, int32_t(p));
    s.ids.push_back(id);
  }
}

// The full buffer of a fetched parameter equals its registered values
// plus `shift` (what the test added to every shard element).
inline void expect_full(Set &s, int32_t id, float shift = 0) {
  void *full = nullptr;
  ASSERT_EQ(smd_sharded_full(s.set, id, &full), SMD_SUCCESS) << smd_last_error();
  const float *f = static_cast<const float *>(full);
  for (size_t i = 0; i < s.counts[size_t(id)]; ++i)
    ASSERT_EQ(f[i], init_value(size_t(id), i) + shift) << "parameter " << id << " element " << i;
}

inline smd_sharded_stats_t stats_of(Set &s) {
  smd_sharded_stats_t st;
  st.struct_size = sizeof st;
  st.version = SMD_SHARDED_STATS_VERSION;
  EXPECT_EQ(smd_sharded_get_stats(s.set, &st), SMD_SUCCESS) << smd_last_error();
  return st;
}

inline const std::vector<size_t> kCounts = {1, 7, 1000, 10007, 3, 4096};

// This rank's full gradients of kCounts-like parameters, and the pointer
// array reduce_grads takes.
struct RankGrads {
  std::vector<std::vector<float>> full;
  std::vector<const void *> ptrs;
  explicit RankGrads(const std::vector<size_t> &counts) : full(counts.size()) {
    for (size_t p = 0; p < counts.size(); ++p) {
      full[p].resize(counts[p]);
      for (size_t i = 0; i < counts[p]; ++i) full[p][i] = grad_value(rank(), p, i);
      ptrs.push_back(full[p].data());
    }
  }
  std::vector<float> &operator[](size_t p) { return full[p]; }
};

}  // namespace shardedtest
