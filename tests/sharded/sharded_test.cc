// Sharded parameter sets (smd_sharded_*) on the world smdrun gives (1-4
// ranks on a node, or fake nodes): gathered parameters equal what was
// registered, gradients equal a full allreduce sliced, clipping equals the
// unsharded norm, the max-live bound holds under random access orders, the
// recorded order prefetches, gathers across nodes take the configured form,
// and bad calls get clear errors. SHARDED_HIERARCHICAL_ALLGATHER=0 in the
// environment sets hierarchical_allgather = 0 in every set the tests make
// (the run with the flat ring forced).
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

using mptest::rank;
using mptest::size;
using mptest::world;

namespace {

// Parameter p's element i: the same on every rank, exact in float32.
float init_value(size_t p, size_t i) { return float((p + 1) * 100 + i % 1013) * 0.25f; }
// Rank r's gradient of parameter p, element i.
float grad_value(int r, size_t p, size_t i) {
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

smd_sharded_config_t config(uint64_t max_live = 1000000000, uint64_t threshold = 0) {
  smd_sharded_config_t c;
  EXPECT_EQ(smd_sharded_config_init(&c), SMD_SUCCESS);
  c.max_live_parameters = max_live;
  c.param_persistence_threshold = threshold;
  if (const char *h = std::getenv("SHARDED_HIERARCHICAL_ALLGATHER"))
    c.hierarchical_allgather = std::atoi(h);
  return c;
}

void make(Set &s, const smd_sharded_config_t &c, const std::vector<size_t> &counts,
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
void expect_full(Set &s, int32_t id, float shift = 0) {
  void *full = nullptr;
  ASSERT_EQ(smd_sharded_full(s.set, id, &full), SMD_SUCCESS) << smd_last_error();
  const float *f = static_cast<const float *>(full);
  for (size_t i = 0; i < s.counts[size_t(id)]; ++i)
    ASSERT_EQ(f[i], init_value(size_t(id), i) + shift) << "parameter " << id << " element " << i;
}

smd_sharded_stats_t stats_of(Set &s) {
  smd_sharded_stats_t st;
  st.struct_size = sizeof st;
  st.version = SMD_SHARDED_STATS_VERSION;
  EXPECT_EQ(smd_sharded_get_stats(s.set, &st), SMD_SUCCESS) << smd_last_error();
  return st;
}

const std::vector<size_t> kCounts = {1, 7, 1000, 10007, 3, 4096};

TEST(Sharded, ShardsArePiecesOfTheParameterPaddedWithZeros) {
  Set s;
  make(s, config(), kCounts);
  size_t owned = 0;
  for (size_t p = 0; p < kCounts.size(); ++p) {
    void *data = nullptr;
    size_t count = 0, offset = 0;
    int persistent = -1;
    ASSERT_EQ(smd_sharded_shard(s.set, int32_t(p), &data, &count, &offset, &persistent),
              SMD_SUCCESS);
    size_t chunk = (kCounts[p] + size_t(size()) - 1) / size_t(size());
    EXPECT_EQ(count, chunk);
    EXPECT_EQ(offset, chunk * size_t(rank()));
    EXPECT_EQ(persistent, 0);
    const float *f = static_cast<const float *>(data);
    for (size_t i = 0; i < count; ++i)
      ASSERT_EQ(f[i], offset + i < kCounts[p] ? init_value(p, offset + i) : 0.0f) << p << " " << i;
    owned += count;
  }
  smd_sharded_stats_t st = stats_of(s);
  EXPECT_EQ(st.parameters, kCounts.size());
  EXPECT_EQ(st.owned_elements, owned);
  EXPECT_EQ(st.persistent_elements, 0u);
  EXPECT_EQ(st.last_grad_norm, -1.0);
}

TEST(Sharded, FetchGathersFullParameters) {
  Set s;
  make(s, config(), kCounts);
  SMD_OK(smd_sharded_fetch(s.set, s.ids.data(), s.ids.size(), nullptr, nullptr));
  for (int32_t id : s.ids) expect_full(s, id);
  SMD_OK(smd_sharded_release(s.set, s.ids.data(), s.ids.size()));
  // Nonblocking, one at a time.
  for (int32_t id : s.ids) {
    smd_request_t *req = nullptr;
    SMD_OK(smd_sharded_fetch(s.set, &id, 1, nullptr, &req));
    SMD_OK(smd_request_wait(req));
    SMD_OK(smd_request_free(req));
    expect_full(s, id);
    SMD_OK(smd_sharded_release(s.set, &id, 1));
  }
  smd_sharded_stats_t st = stats_of(s);
  EXPECT_EQ(st.fetches, 2 * kCounts.size());
  EXPECT_EQ(st.cache_hits, kCounts.size());  // the second round found them gathered
}

TEST(Sharded, PersistentParametersStayWhole) {
  Set s;
  make(s, config(1000000000, 1000), kCounts);  // 1, 7, 3 stay whole
  smd_sharded_stats_t st = stats_of(s);
  EXPECT_EQ(st.persistent_elements, 1u + 7u + 3u);
  for (size_t p = 0; p < kCounts.size(); ++p) {
    void *data = nullptr;
    size_t count = 0, offset = 9;
    int persistent = -1;
    ASSERT_EQ(smd_sharded_shard(s.set, int32_t(p), &data, &count, &offset, &persistent),
              SMD_SUCCESS);
    EXPECT_EQ(persistent, kCounts[p] < 1000 ? 1 : 0);
    if (persistent) {
      EXPECT_EQ(count, kCounts[p]);
      EXPECT_EQ(offset, 0u);
    }
  }
  SMD_OK(smd_sharded_fetch(s.set, s.ids.data(), s.ids.size(), nullptr, nullptr));
  for (int32_t id : s.ids) expect_full(s, id);
  SMD_OK(smd_sharded_release(s.set, s.ids.data(), s.ids.size()));
  st = stats_of(s);
  EXPECT_EQ(st.peak_live_elements, 1000u + 10007u + 4096u);  // persistent ones are never gathered
}

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

struct GradCase {
  bool average;
  int wire;  // -1 or a 16-bit type
  uint64_t bucket;
  uint64_t threshold;
  // Reduced in these parts (smd_sharded_reduce_grads_part, nonblocking,
  // then smd_sharded_reduce_grads of nothing), or all in one call when empty.
  std::vector<std::vector<int32_t>> parts = {};
};

// Every rank's gradients reduced by the set equal a full allreduce of them,
// sliced to the rank's shard.
void check_reduce_grads(const GradCase &g) {
  smd_sharded_config_t c = config(1000000000, g.threshold);
  c.average_gradients = g.average;
  c.gradient_wire_dtype = g.wire;
  c.reduce_bucket_size = g.bucket;
  Set s;
  make(s, c, kCounts);
  RankGrads grads(kCounts);
  const auto &ptrs = grads.ptrs;
  if (g.parts.empty()) {
    SMD_OK(
        smd_sharded_reduce_grads(s.set, s.ids.data(), s.ids.size(), ptrs.data(), nullptr, nullptr));
  } else {
    std::vector<smd_request_t *> requests;
    for (const auto &part : g.parts) {
      std::vector<const void *> part_ptrs;
      for (int32_t id : part) part_ptrs.push_back(ptrs[size_t(id)]);
      smd_request_t *r = nullptr;
      SMD_OK(smd_sharded_reduce_grads_part(s.set, part.data(), part.size(), part_ptrs.data(),
                                           nullptr, &r));
      requests.push_back(r);
    }
    SMD_OK(smd_sharded_reduce_grads(s.set, nullptr, 0, nullptr, nullptr, nullptr));
    for (smd_request_t *r : requests) {
      SMD_OK(smd_request_wait(r));
      SMD_OK(smd_request_free(r));
    }
  }
  double tol = g.wire == SMD_FLOAT16 ? 2e-3 : g.wire == SMD_BFLOAT16 ? 1.6e-2 : 0;
  for (size_t p = 0; p < kCounts.size(); ++p) {
    std::vector<float> want(kCounts[p]);
    SMD_OK(smd_allreduce(grads[p].data(), want.data(), want.size(), SMD_FLOAT32,
                         g.average ? SMD_AVG : SMD_SUM, world(), nullptr));
    void *data = nullptr, *shard = nullptr;
    size_t count = 0, offset = 0;
    int persistent = 0;
    SMD_OK(smd_sharded_grad(s.set, int32_t(p), &data, &count));
    SMD_OK(smd_sharded_shard(s.set, int32_t(p), &shard, nullptr, &offset, &persistent));
    const float *got = static_cast<const float *>(data);
    for (size_t i = 0; i < count; ++i) {
      float w = offset + i < kCounts[p] ? want[offset + i] : 0.0f;
      ASSERT_NEAR(got[i], w, tol * (1 + std::fabs(w))) << "parameter " << p << " element " << i;
    }
  }
}

TEST(Sharded, ReduceGradsSumEqualsAllreduceSliced) {
  check_reduce_grads({false, -1, 500000000, 0});
}
TEST(Sharded, ReduceGradsAverageInSmallBuckets) { check_reduce_grads({true, -1, 333, 0}); }
TEST(Sharded, ReduceGradsPersistentAreAllreduced) { check_reduce_grads({true, -1, 100, 1000}); }
TEST(Sharded, ReduceGradsFloat16Wire) { check_reduce_grads({true, SMD_FLOAT16, 2000, 5}); }
TEST(Sharded, ReduceGradsBfloat16Wire) { check_reduce_grads({false, SMD_BFLOAT16, 500000000, 0}); }
TEST(Sharded, ReduceGradsInPartsEqualOneReduction) {
  check_reduce_grads({true, -1, 333, 5, {{5, 4}, {3}, {2, 1, 0}}});
}

// Parts do not end the round: what was gathered stays (a later fetch is a
// cache hit); each gradient is reduced once per round, whichever call.
TEST(Sharded, ReduceGradsPartKeepsTheRound) {
  Set s;
  make(s, config(), {100, 200});
  RankGrads grads({100, 200});
  int32_t first = 0, second = 1;
  SMD_OK(smd_sharded_fetch(s.set, &first, 1, nullptr, nullptr));
  SMD_OK(smd_sharded_release(s.set, &first, 1));
  SMD_OK(smd_sharded_reduce_grads_part(s.set, &second, 1, &grads.ptrs[1], nullptr, nullptr));
  uint64_t hits = stats_of(s).cache_hits;
  SMD_OK(smd_sharded_fetch(s.set, &first, 1, nullptr, nullptr));
  EXPECT_EQ(stats_of(s).cache_hits, hits + 1);
  SMD_OK(smd_sharded_release(s.set, &first, 1));
  EXPECT_EQ(smd_sharded_reduce_grads_part(s.set, &second, 1, &grads.ptrs[1], nullptr, nullptr),
            SMD_ERR_INVALID_USAGE);
  EXPECT_NE(std::string(smd_last_error()).find("already reduced in this round"), std::string::npos)
      << smd_last_error();
  EXPECT_EQ(smd_sharded_reduce_grads(s.set, &second, 1, &grads.ptrs[1], nullptr, nullptr),
            SMD_ERR_INVALID_USAGE);
  SMD_OK(smd_sharded_reduce_grads(s.set, &first, 1, &grads.ptrs[0], nullptr, nullptr));
  EXPECT_EQ(stats_of(s).live_elements, 0u);  // the round ended: gathered copies dropped
  // A new round: both may be reduced again.
  SMD_OK(smd_sharded_reduce_grads_part(s.set, &second, 1, &grads.ptrs[1], nullptr, nullptr));
  SMD_OK(smd_sharded_reduce_grads(s.set, &first, 1, &grads.ptrs[0], nullptr, nullptr));
  EXPECT_EQ(smd_sharded_reduce_grads_part(s.set, &first, 1, nullptr, nullptr, nullptr),
            SMD_ERR_INVALID_ARGUMENT);
}

TEST(Sharded, ClipEqualsTheUnshardedNorm) {
  Set s;
  make(s, config(1000000000, 10), kCounts);  // 1, 7, 3 persistent
  RankGrads grads(kCounts);
  const auto &ptrs = grads.ptrs;
  smd_request_t *req = nullptr;
  SMD_OK(smd_sharded_reduce_grads(s.set, s.ids.data(), s.ids.size(), ptrs.data(), nullptr, &req));
  SMD_OK(smd_request_wait(req));
  SMD_OK(smd_request_free(req));
  double want = 0;
  for (size_t p = 0; p < kCounts.size(); ++p) {
    std::vector<float> full(kCounts[p]);
    SMD_OK(smd_allreduce(grads[p].data(), full.data(), full.size(), SMD_FLOAT32, SMD_AVG, world(),
                         nullptr));
    for (float v : full) want += double(v) * v;
  }
  want = std::sqrt(want);
  double norm = 0;
  SMD_OK(smd_sharded_clip_grads(s.set, 0, &norm));  // 0: measure only
  EXPECT_NEAR(norm, want, 1e-6 * want);
  SMD_OK(smd_sharded_clip_grads(s.set, want / 4, &norm));
  EXPECT_NEAR(norm, want, 1e-6 * want);
  SMD_OK(smd_sharded_clip_grads(s.set, 0, &norm));
  EXPECT_NEAR(norm, want / 4, 1e-5 * want);
  EXPECT_NEAR(stats_of(s).last_grad_norm, want / 4, 1e-5 * want);
}

// Random fetch/release sequences, the same on every rank: the gathered
// elements never pass the bound, values are right at every fetch, and a
// fetch that only held buffers would push past it fails cleanly.
TEST(Sharded, MaxLiveBoundHoldsUnderRandomOrders) {
  const std::vector<size_t> counts = {500, 1200, 64, 3000, 999, 2048, 10, 1500};
  const uint64_t bound = 4000;
  Set s;
  make(s, config(bound), counts);
  std::mt19937 rng(1234);
  std::vector<int32_t> held;
  size_t no_memory = 0;
  for (int step = 0; step < 300; ++step) {
    if (!held.empty() && (rng() % 2 || held.size() > 3)) {
      size_t k = rng() % held.size();
      SMD_OK(smd_sharded_release(s.set, &held[k], 1));
      held.erase(held.begin() + long(k));
      continue;
    }
    int32_t id = int32_t(rng() % counts.size());
    if (std::find(held.begin(), held.end(), id) != held.end()) continue;
    uint64_t held_elems = counts[size_t(id)];
    for (int32_t h : held) held_elems += counts[size_t(h)];
    smd_sharded_stats_t before = stats_of(s);
    smd_result_t r = smd_sharded_fetch(s.set, &id, 1, nullptr, nullptr);
    if (held_elems > bound) {
      ASSERT_EQ(r, SMD_ERR_NO_MEMORY) << smd_last_error();
      smd_sharded_stats_t after = stats_of(s);
      EXPECT_EQ(after.live_elements, before.live_elements);
      EXPECT_EQ(after.evictions, before.evictions);
      ++no_memory;
      continue;
    }
    ASSERT_EQ(r, SMD_SUCCESS) << smd_last_error();
    expect_full(s, id);
    held.push_back(id);
    ASSERT_LE(stats_of(s).live_elements, bound);
  }
  smd_sharded_stats_t st = stats_of(s);
  EXPECT_LE(st.peak_live_elements, bound);
  EXPECT_GT(st.evictions, 0u);
  EXPECT_GT(st.cache_hits, 0u);
  EXPECT_GT(no_memory, 0u);
  if (!held.empty()) SMD_OK(smd_sharded_release(s.set, held.data(), held.size()));
}

// A model's rounds: forward fetches layer by layer, backward in reverse,
// then reduce_grads and a step that changes the shards. From the second
// round on, the recorded order prefetches, and nothing stale is served.
// What the prefetcher should have gathered: the lookahead fetch_order.h
// documents (after each fetch call of a recorded round, up to `depth`
// distinct parameters of the calls that follow, not the fetched ones, never
// past the round's end), played over the recorded calls.
std::vector<int32_t> expected_ahead(const std::vector<int32_t> &calls, size_t at, size_t depth) {
  std::vector<int32_t> ahead;
  for (size_t k = at + 1; k < calls.size() && ahead.size() < depth; ++k)
    if (calls[k] != calls[at] && std::find(ahead.begin(), ahead.end(), calls[k]) == ahead.end())
      ahead.push_back(calls[k]);
  return ahead;
}

// With room for every parameter (no eviction), each fetch of a later round
// gathers exactly the parameters the recorded order names next: the
// parameters gathered (live_elements: their counts differ) and the
// prefetch count match the lookahead after every call, and every fetch
// but the round's first finds its parameter already gathered.
TEST(Sharded, PrefetchFollowsTheRecordedOrder) {
  const std::vector<size_t> counts = {800, 1000, 1200, 900, 700, 1100};
  Set s;
  smd_sharded_config_t c = config();
  ASSERT_EQ(c.prefetch_depth, 2);
  make(s, c, counts);
  std::vector<int32_t> order(s.ids);
  order.insert(order.end(), s.ids.rbegin(), s.ids.rend());
  std::vector<std::vector<float>> grads(counts.size());
  std::vector<const void *> ptrs;
  for (size_t p = 0; p < counts.size(); ++p) {
    grads[p].assign(counts[p], 1.0f);
    ptrs.push_back(grads[p].data());
  }
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::set<int32_t> gathered;  // round 0 records: nothing is gathered ahead
    for (size_t k = 0; k < order.size(); ++k) {
      SCOPED_TRACE("call " + std::to_string(k) + ", parameter " + std::to_string(order[k]));
      int32_t id = order[k];
      smd_sharded_stats_t before = stats_of(s);
      SMD_OK(smd_sharded_fetch(s.set, &id, 1, nullptr, nullptr));
      smd_sharded_stats_t after = stats_of(s);
      expect_full(s, id, float(round));
      SMD_OK(smd_sharded_release(s.set, &id, 1));
      if (round == 0) {
        EXPECT_EQ(after.prefetches, before.prefetches);
        continue;
      }
      EXPECT_EQ(after.cache_hits - before.cache_hits, gathered.count(id) ? 1u : 0u);
      if (k > 0) {
        EXPECT_TRUE(gathered.count(id)) << "not gathered ahead";
      }
      gathered.insert(id);
      uint64_t fresh = 0;
      for (int32_t next : expected_ahead(order, k, size_t(c.prefetch_depth)))
        fresh += gathered.insert(next).second;
      EXPECT_EQ(after.prefetches - before.prefetches, fresh);
      uint64_t live = 0;
      for (int32_t g : gathered) live += counts[size_t(g)];
      EXPECT_EQ(after.live_elements, live);
    }
    SMD_OK(
        smd_sharded_reduce_grads(s.set, s.ids.data(), s.ids.size(), ptrs.data(), nullptr, nullptr));
    // The "optimizer step": every element of every shard goes up by one.
    for (int32_t id : s.ids) {
      void *data = nullptr;
      size_t count = 0, offset = 0;
      SMD_OK(smd_sharded_shard(s.set, id, &data, &count, &offset, nullptr));
      float *f = static_cast<float *>(data);
      for (size_t i = 0; i < count && offset + i < counts[size_t(id)]; ++i) f[i] += 1.0f;
    }
  }
}

// With a max-live bound that forces evictions, prefetching stays inside it.
TEST(Sharded, PrefetchStaysWithinTheLiveBound) {
  const std::vector<size_t> counts = {800, 1000, 1200, 900, 700, 1100};
  const uint64_t bound = 3000;
  Set s;
  make(s, config(bound), counts);
  for (int round = 0; round < 4; ++round) {
    std::vector<int32_t> order(s.ids);
    order.insert(order.end(), s.ids.rbegin(), s.ids.rend());
    for (int32_t id : order) {
      SMD_OK(smd_sharded_fetch(s.set, &id, 1, nullptr, nullptr));
      expect_full(s, id);
      SMD_OK(smd_sharded_release(s.set, &id, 1));
      ASSERT_LE(stats_of(s).live_elements, bound);
    }
    std::vector<std::vector<float>> grads(counts.size());
    std::vector<const void *> ptrs;
    for (size_t p = 0; p < counts.size(); ++p) {
      grads[p].assign(counts[p], 0.0f);
      ptrs.push_back(grads[p].data());
    }
    SMD_OK(
        smd_sharded_reduce_grads(s.set, s.ids.data(), s.ids.size(), ptrs.data(), nullptr, nullptr));
  }
  smd_sharded_stats_t st = stats_of(s);
  EXPECT_GT(st.prefetches, 0u);
  EXPECT_LE(st.peak_live_elements, bound);
}

// The gather of one parameter, and what it sent across nodes (the most of
// any rank) by the communicator's statistics.
struct GatherSeen {
  std::string algorithm;
  uint64_t most_sent_across = 0;
};

GatherSeen gather_once(int hierarchical, size_t count) {
  smd_sharded_config_t c = config();
  c.hierarchical_allgather = hierarchical;
  c.prefetch_depth = 0;
  Set s;
  make(s, c, {count});
  smd_comm_stats_t st;
  memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  EXPECT_EQ(smd_comm_get_stats(world(), &st), SMD_SUCCESS);
  uint64_t before = st.inter_node_bytes_sent;
  int32_t id = 0;
  EXPECT_EQ(smd_sharded_fetch(s.set, &id, 1, nullptr, nullptr), SMD_SUCCESS) << smd_last_error();
  EXPECT_EQ(smd_comm_get_stats(world(), &st), SMD_SUCCESS);
  GatherSeen seen{st.last_algorithm, 0};
  uint64_t mine = st.inter_node_bytes_sent - before;
  EXPECT_EQ(smd_allreduce(&mine, &seen.most_sent_across, 1, SMD_UINT64, SMD_MAX, world(), nullptr),
            SMD_SUCCESS);
  expect_full(s, id);
  EXPECT_EQ(smd_sharded_release(s.set, &id, 1), SMD_SUCCESS);
  return seen;
}

// docs/SHARDING.md: across nodes, hierarchical_allgather = 1 gathers inside
// nodes, then across (each rank sends its shard to one peer per other
// node), and 0 forces the flat ring (a rank next to another node sends
// p-1 shards across); inside one node the setting changes nothing.
TEST(Sharded, GatherAcrossNodesTakesTheConfiguredForm) {
  int nodes = 1, local = 1, lo = 0;
  SMD_OK(smd_comm_node_count(world(), &nodes));
  SMD_OK(smd_comm_local_size(world(), &local));
  SMD_OK(smd_allreduce(&local, &lo, 1, SMD_INT32, SMD_MIN, world(), nullptr));
  const size_t count = size_t(1) << 20;
  const double shard_bytes = double((count + size_t(size()) - 1) / size_t(size())) * sizeof(float);
  int configured = 1;
  if (const char *h = std::getenv("SHARDED_HIERARCHICAL_ALLGATHER")) configured = std::atoi(h);
  GatherSeen seen = gather_once(configured, count);
  SCOPED_TRACE("algorithm " + seen.algorithm + ", " + std::to_string(seen.most_sent_across) +
               " B across nodes");
  if (nodes < 2) {
    EXPECT_EQ(seen.algorithm, gather_once(1 - configured, count).algorithm);
    EXPECT_EQ(seen.most_sent_across, 0u);
  } else if (configured == 0) {
    EXPECT_EQ(seen.algorithm, "ring");
    EXPECT_GE(double(seen.most_sent_across), (size() - 1) * shard_bytes);
  } else if (lo == local && local > 1) {  // as many ranks on every node
    EXPECT_EQ(seen.algorithm, "hierarchical");
    EXPECT_LE(double(seen.most_sent_across), (nodes - 1) * shard_bytes + 4096);
  } else {  // nodes of different sizes, or one rank each: no hierarchy to take
    EXPECT_NE(seen.algorithm, "hierarchical");
  }
}

// dp = sdp x replicas: the shard group is an SDP group of smd_groups_create,
// the replicas the ranks at the same place of the other chunks; gradients
// averaged over both equal the world's average, sliced to the shard.
TEST(Sharded, SdpGroupWithReplicas) {
  if (size() % 2) GTEST_SKIP() << "needs an even number of ranks";
  smd_groups_config_t gc = SMD_GROUPS_CONFIG_INIT;
  gc.sdp = 2;
  smd_groups_t *groups = nullptr;
  SMD_OK(smd_groups_create(world(), &gc, &groups));
  smd_comm_t *sdp = nullptr, *rdp = nullptr, *replicas = nullptr;
  int rdp_rank = -1, sdp_size = 0;
  SMD_OK(smd_groups_comm(groups, SMD_GROUP_SDP, &sdp));
  SMD_OK(smd_groups_comm(groups, SMD_GROUP_RDP, &rdp));
  SMD_OK(smd_groups_rank(groups, SMD_GROUP_RDP, &rdp_rank));
  SMD_OK(smd_groups_size(groups, SMD_GROUP_SDP, &sdp_size));
  ASSERT_EQ(sdp_size, 2);
  SMD_OK(smd_comm_split(rdp, rdp_rank % 2, rdp_rank, &replicas));
  smd_sharded_config_t c = config(1000000000, 0);
  c.replica_comm = replicas;
  c.reduce_bucket_size = 1000;
  smd_sharded_t *set = nullptr;
  SMD_OK(smd_sharded_create(sdp, &c, &set));
  std::vector<int32_t> ids;
  for (size_t p = 0; p < kCounts.size(); ++p) {
    int32_t id = -1;
    SMD_OK(smd_sharded_register(set, kCounts[p], SMD_FLOAT32, nullptr, &id));
    ids.push_back(id);
  }
  RankGrads grads(kCounts);
  SMD_OK(
      smd_sharded_reduce_grads(set, ids.data(), ids.size(), grads.ptrs.data(), nullptr, nullptr));
  for (size_t p = 0; p < kCounts.size(); ++p) {
    std::vector<float> want(kCounts[p]);
    SMD_OK(smd_allreduce(grads[p].data(), want.data(), want.size(), SMD_FLOAT32, SMD_AVG, world(),
                         nullptr));
    void *data = nullptr, *shard = nullptr;
    size_t count = 0, offset = 0;
    SMD_OK(smd_sharded_grad(set, int32_t(p), &data, &count));
    SMD_OK(smd_sharded_shard(set, int32_t(p), &shard, nullptr, &offset, nullptr));
    for (size_t i = 0; i < count && offset + i < kCounts[p]; ++i)
      ASSERT_NEAR(static_cast<const float *>(data)[i], want[offset + i],
                  1e-5 * (1 + std::fabs(want[offset + i])))
          << "parameter " << p << " element " << i;
  }
  SMD_OK(smd_sharded_destroy(set));
  SMD_OK(smd_comm_destroy(replicas));
  SMD_OK(smd_groups_destroy(groups));
}

TEST(Sharded, ClearErrors) {
  Set s;
  make(s, config(1000), {100, 200, 900});
  int32_t bad = 7, id = 0;
  void *p = nullptr;
  EXPECT_EQ(smd_sharded_fetch(s.set, &bad, 1, nullptr, nullptr), SMD_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(smd_last_error()).find("unknown parameter id 7"), std::string::npos)
      << smd_last_error();
  EXPECT_EQ(smd_sharded_fetch(s.set, nullptr, 2, nullptr, nullptr), SMD_ERR_INVALID_ARGUMENT);
  int32_t twice[] = {1, 1};
  EXPECT_EQ(smd_sharded_fetch(s.set, twice, 2, nullptr, nullptr), SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(smd_sharded_full(s.set, 0, &p), SMD_ERR_INVALID_USAGE);
  EXPECT_EQ(smd_sharded_release(s.set, &id, 1), SMD_ERR_INVALID_USAGE);
  SMD_OK(smd_sharded_fetch(s.set, &id, 1, nullptr, nullptr));
  SMD_OK(smd_sharded_release(s.set, &id, 1));
  EXPECT_EQ(smd_sharded_release(s.set, &id, 1), SMD_ERR_INVALID_USAGE);
  EXPECT_NE(std::string(smd_last_error()).find("released more often"), std::string::npos)
      << smd_last_error();
  int32_t late = -1;
  EXPECT_EQ(smd_sharded_register(s.set, 10, SMD_FLOAT32, nullptr, &late), SMD_ERR_INVALID_USAGE);
  EXPECT_EQ(late, -1);
  // Held alone past the bound: 100 + 900 fit, 200 more do not.
  int32_t two[] = {0, 2}, one = 1;
  SMD_OK(smd_sharded_fetch(s.set, two, 2, nullptr, nullptr));
  EXPECT_EQ(smd_sharded_fetch(s.set, &one, 1, nullptr, nullptr), SMD_ERR_NO_MEMORY);
  EXPECT_NE(std::string(smd_last_error()).find("max_live_parameters"), std::string::npos);
  SMD_OK(smd_sharded_release(s.set, two, 2));
  int32_t all[] = {0, 1, 2};  // 1200 elements at once: never
  EXPECT_EQ(smd_sharded_fetch(s.set, all, 3, nullptr, nullptr), SMD_ERR_NO_MEMORY);
  EXPECT_NE(std::string(smd_last_error()).find("more than max_live_parameters (1000)"),
            std::string::npos)
      << smd_last_error();
  SMD_OK(smd_sharded_fetch(s.set, &one, 1, nullptr, nullptr));  // evicts
  SMD_OK(smd_sharded_release(s.set, &one, 1));
  EXPECT_EQ(smd_sharded_reduce_grads(s.set, &id, 1, nullptr, nullptr, nullptr),
            SMD_ERR_INVALID_ARGUMENT);
  const void *null_grad = nullptr;
  EXPECT_EQ(smd_sharded_reduce_grads(s.set, &id, 1, &null_grad, nullptr, nullptr),
            SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(smd_sharded_clip_grads(s.set, -1, nullptr), SMD_ERR_INVALID_ARGUMENT);
  smd_sharded_stats_t st{};
  EXPECT_EQ(smd_sharded_get_stats(s.set, &st), SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(smd_sharded_shard(s.set, 3, &p, nullptr, nullptr, nullptr), SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(smd_sharded_full(nullptr, 0, &p), SMD_ERR_INVALID_ARGUMENT);
  SMD_OK(smd_group_start());
  EXPECT_EQ(smd_sharded_fetch(s.set, &id, 1, nullptr, nullptr), SMD_ERR_INVALID_USAGE);
  EXPECT_NE(std::string(smd_last_error()).find("smd_group_start"), std::string::npos)
      << smd_last_error();
  smd_group_end();
}

TEST(Sharded, RegistrationErrors) {
  Set s;
  make(s, config(), {});
  int32_t id = -1;
  EXPECT_EQ(smd_sharded_register(s.set, 0, SMD_FLOAT32, nullptr, &id), SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(smd_sharded_register(s.set, 10, SMD_INT32, nullptr, &id), SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(smd_sharded_register(s.set, 10, SMD_FLOAT32, nullptr, nullptr),
            SMD_ERR_INVALID_ARGUMENT);
  SMD_OK(smd_sharded_register(s.set, 10, SMD_BFLOAT16, nullptr, &id));
  EXPECT_EQ(id, 0);
}

// Counts whose shard or gathered size wraps size_t (count + ranks - 1
// overflowed to a 0-element shard once) are refused, sharded or whole.
TEST(Sharded, CountsThatOverflowAreRefused) {
  for (uint64_t threshold : {uint64_t(0), UINT64_MAX}) {
    Set s;
    make(s, config(1000000000, threshold), {});
    for (size_t count : {SIZE_MAX, SIZE_MAX - 1, SIZE_MAX / 2 + 1, SIZE_MAX / 4 + 1,
                         size_t(PTRDIFF_MAX / 4) + 1}) {
      int32_t id = -1;
      EXPECT_EQ(smd_sharded_register(s.set, count, SMD_FLOAT32, nullptr, &id),
                SMD_ERR_INVALID_ARGUMENT)
          << "count " << count << " threshold " << threshold;
      EXPECT_EQ(id, -1);
      EXPECT_NE(std::string(smd_last_error()).find("too large"), std::string::npos)
          << smd_last_error();
    }
    int32_t id = -1;
    SMD_OK(smd_sharded_register(s.set, 10, SMD_FLOAT32, nullptr, &id));
    EXPECT_EQ(id, 0);
  }
}

// An n no set could hold is refused before ids is read (it was an
// internal error from the vector's constructor).
TEST(Sharded, ImpossibleIdCountsAreRefused) {
  Set s;
  make(s, config(), {10, 20});
  int32_t ids[] = {0, 1};
  const void *grads[] = {ids, ids};
  for (size_t n : {SIZE_MAX, size_t(3)}) {
    EXPECT_EQ(smd_sharded_fetch(s.set, ids, n, nullptr, nullptr), SMD_ERR_INVALID_ARGUMENT) << n;
    EXPECT_NE(std::string(smd_last_error()).find("the set has 2 parameters"), std::string::npos)
        << smd_last_error();
    EXPECT_EQ(smd_sharded_reduce_grads(s.set, ids, n, grads, nullptr, nullptr),
              SMD_ERR_INVALID_ARGUMENT)
        << n;
  }
  EXPECT_EQ(smd_sharded_release(s.set, ids, SIZE_MAX), SMD_ERR_INVALID_ARGUMENT);
}

TEST(Sharded, BadConfigurationsFailOnEveryRank) {
  smd_sharded_config_t c = config();
  c.prefetch_depth = -1;
  smd_sharded_t *set = nullptr;
  EXPECT_EQ(smd_sharded_create(world(), &c, &set), SMD_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(set, nullptr);
  c = config();
  c.struct_size = 8;
  EXPECT_EQ(smd_sharded_create(world(), &c, &set), SMD_ERR_INVALID_ARGUMENT);
  if (size() > 1) {
    // One rank's bound differs: every rank hears of it.
    c = config(rank() == size() - 1 ? 5 : 1000000);
    EXPECT_EQ(smd_sharded_create(world(), &c, &set), SMD_ERR_MISMATCH);
    EXPECT_EQ(set, nullptr);
  }
  SMD_OK(smd_sharded_create(world(), nullptr, &set));  // defaults
  SMD_OK(smd_sharded_destroy(set));
}

TEST(Sharded, DifferentRegistrationsMismatchOnEveryRank) {
  if (size() == 1) GTEST_SKIP() << "needs two ranks";
  Set s;
  make(s, config(), {100, rank() == 0 ? size_t(200) : size_t(201)});
  int32_t id = 0;
  EXPECT_EQ(smd_sharded_fetch(s.set, &id, 1, nullptr, nullptr), SMD_ERR_MISMATCH);
  EXPECT_NE(std::string(smd_last_error()).find("registered parameters"), std::string::npos)
      << smd_last_error();
}

// Ranks that fetch or reduce different parameters of one size: each
// collective carries its parameters' ids (its subject), so every rank gets
// SMD_ERR_MISMATCH instead of half of each parameter. On a duplicate of
// the world, which the mismatch poisons.
TEST(Sharded, DifferentParametersOfOneSizeMismatchOnEveryRank) {
  if (size() == 1) GTEST_SKIP() << "needs two ranks";
  const bool last = rank() == size() - 1;
  for (uint64_t threshold : {uint64_t(0), uint64_t(1000)}) {  // sharded, then persistent
    for (bool reduce : {false, true}) {
      if (threshold && !reduce) continue;  // persistent parameters are not gathered
      smd_comm_t *c = nullptr;
      SMD_OK(smd_comm_dup(world(), &c));
      {
        Set s;
        make(s, config(1000000000, threshold), {64, 64}, c);
        int32_t id = last ? 1 : 0;
        smd_result_t r;
        if (reduce) {
          std::vector<float> grad(64, 1.0f);
          const void *g = grad.data();
          r = smd_sharded_reduce_grads(s.set, &id, 1, &g, nullptr, nullptr);
        } else {
          r = smd_sharded_fetch(s.set, &id, 1, nullptr, nullptr);
        }
        EXPECT_EQ(r, SMD_ERR_MISMATCH) << (reduce ? "reduce_grads" : "fetch") << " threshold "
                                       << threshold << ": " << smd_last_error();
      }
      SMD_OK(smd_comm_destroy(c));
      SMD_OK(smd_barrier(world(), nullptr));
    }
  }
}

// Parts of a round that differ between the ranks, for parameters of one
// size: the same parameters in another order, then other groupings (one
// part of both against one part each). Every rank gets SMD_ERR_MISMATCH
// from the first part that differs.
TEST(Sharded, ReduceGradsPartsThatDifferMismatchOnEveryRank) {
  if (size() == 1) GTEST_SKIP() << "needs two ranks";
  const bool last = rank() == size() - 1;
  using Parts = std::vector<std::vector<int32_t>>;
  const std::vector<std::pair<Parts, Parts>> cases = {
      {{{0}, {1}}, {{1}, {0}}},  // another order
      {{{0, 1}}, {{0}, {1}}},    // other parts
  };
  for (uint64_t threshold : {uint64_t(0), uint64_t(1000)}) {  // sharded, then persistent
    for (const auto &c : cases) {
      smd_comm_t *dup = nullptr;
      SMD_OK(smd_comm_dup(world(), &dup));
      {
        Set s;
        make(s, config(1000000000, threshold), {64, 64}, dup);
        RankGrads grads({64, 64});
        const Parts &mine = last ? c.second : c.first;
        std::vector<const void *> ptrs;
        for (int32_t id : mine[0]) ptrs.push_back(grads.ptrs[size_t(id)]);
        EXPECT_EQ(smd_sharded_reduce_grads_part(s.set, mine[0].data(), mine[0].size(), ptrs.data(),
                                                nullptr, nullptr),
                  SMD_ERR_MISMATCH)
            << "threshold " << threshold << ": " << smd_last_error();
      }
      SMD_OK(smd_comm_destroy(dup));
      SMD_OK(smd_barrier(world(), nullptr));
    }
  }
}

// The same parameters in another order: the first gather differs.
TEST(Sharded, FetchInAnotherOrderMismatchesOnEveryRank) {
  if (size() == 1) GTEST_SKIP() << "needs two ranks";
  smd_comm_t *c = nullptr;
  SMD_OK(smd_comm_dup(world(), &c));
  {
    Set s;
    make(s, config(), {64, 64}, c);
    std::vector<int32_t> ids =
        rank() == size() - 1 ? std::vector<int32_t>{1, 0} : std::vector<int32_t>{0, 1};
    EXPECT_EQ(smd_sharded_fetch(s.set, ids.data(), ids.size(), nullptr, nullptr), SMD_ERR_MISMATCH)
        << smd_last_error();
  }
  SMD_OK(smd_comm_destroy(c));
  SMD_OK(smd_barrier(world(), nullptr));
}

// fetch_into: the caller's buffers receive the parameters (the padding's
// zeros past each count), blocking and not, persistent ones copied; the
// set gathers nothing of its own (no live elements, nothing to release).
TEST(Sharded, FetchIntoGathersIntoTheCallersBuffers) {
  for (uint64_t threshold : {uint64_t(0), uint64_t(8)}) {  // all sharded, then 1, 7, 3 persistent
    Set s;
    make(s, config(10, threshold), kCounts);  // a bound fetch_into never meets
    std::vector<std::vector<float>> bufs;
    std::vector<void *> dsts;
    std::vector<size_t> caps;
    std::vector<smd_datatype_t> types(kCounts.size(), SMD_FLOAT32);
    for (int32_t id : s.ids) {
      size_t need = 0;
      SMD_OK(smd_sharded_gathered_count(s.set, id, &need));
      size_t count = kCounts[size_t(id)];
      size_t padded = count < threshold
                          ? count
                          : (count + size_t(size()) - 1) / size_t(size()) * size_t(size());
      EXPECT_EQ(need, padded) << "parameter " << id;
      bufs.emplace_back(need + 3, -1.0f);  // larger than needed is fine
      caps.push_back(bufs.back().size());
    }
    for (auto &b : bufs) dsts.push_back(b.data());
    for (bool blocking : {true, false}) {
      for (auto &b : bufs) std::fill(b.begin(), b.end(), -1.0f);
      smd_request_t *req = nullptr;
      SMD_OK(smd_sharded_fetch_into(s.set, s.ids.data(), s.ids.size(), types.data(), dsts.data(),
                                    caps.data(), nullptr, blocking ? nullptr : &req));
      if (!blocking) {
        SMD_OK(smd_request_wait(req));
        SMD_OK(smd_request_free(req));
      }
      for (size_t p = 0; p < kCounts.size(); ++p) {
        size_t need = 0;
        SMD_OK(smd_sharded_gathered_count(s.set, int32_t(p), &need));
        for (size_t i = 0; i < kCounts[p]; ++i)
          ASSERT_EQ(bufs[p][i], init_value(p, i)) << "parameter " << p << " element " << i;
        for (size_t i = kCounts[p]; i < need; ++i)
          ASSERT_EQ(bufs[p][i], 0.0f) << "padding of " << p;
        for (size_t i = need; i < bufs[p].size(); ++i) ASSERT_EQ(bufs[p][i], -1.0f) << "past " << p;
      }
    }
    smd_sharded_stats_t st = stats_of(s);
    EXPECT_EQ(st.live_elements, 0u);
    EXPECT_EQ(st.peak_live_elements, 0u);
    int32_t first = 0;
    EXPECT_EQ(smd_sharded_release(s.set, &first, 1), SMD_ERR_INVALID_USAGE);  // nothing held
  }
}

// Bad arguments on every rank alike: each rank gets
// SMD_ERR_INVALID_ARGUMENT naming the problem, and nothing is written.
TEST(Sharded, FetchIntoRefusesBadBuffers) {
  smd_comm_t *c = nullptr;
  SMD_OK(smd_comm_dup(world(), &c));
  {
    Set s;
    make(s, config(), {100}, c);
    int32_t id = 0;
    size_t need = 0;
    SMD_OK(smd_sharded_gathered_count(s.set, id, &need));
    std::vector<float> buf(need, -1.0f);
    void *dst = buf.data();
    size_t small = need - 1;
    smd_datatype_t f32 = SMD_FLOAT32, f64 = SMD_FLOAT64;
    EXPECT_EQ(smd_sharded_fetch_into(s.set, &id, 1, &f32, &dst, &small, nullptr, nullptr),
              SMD_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(smd_last_error()).find("needs " + std::to_string(need)),
              std::string::npos)
        << smd_last_error();
    EXPECT_EQ(smd_sharded_fetch_into(s.set, &id, 1, &f64, &dst, &need, nullptr, nullptr),
              SMD_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(smd_last_error()).find("float64"), std::string::npos) << smd_last_error();
    void *null = nullptr;
    EXPECT_EQ(smd_sharded_fetch_into(s.set, &id, 1, &f32, &null, &need, nullptr, nullptr),
              SMD_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(smd_sharded_fetch_into(s.set, &id, 1, nullptr, &dst, &need, nullptr, nullptr),
              SMD_ERR_INVALID_ARGUMENT);
    int32_t unknown = 7;
    EXPECT_EQ(smd_sharded_fetch_into(s.set, &unknown, 1, &f32, &dst, &need, nullptr, nullptr),
              SMD_ERR_INVALID_ARGUMENT);
    size_t none = 1;
    EXPECT_EQ(smd_sharded_gathered_count(s.set, unknown, &none), SMD_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(none, 0u);
    for (float v : buf) ASSERT_EQ(v, -1.0f);
    // The ranks all refused alike, so the communicator still works.
    SMD_OK(smd_sharded_fetch_into(s.set, &id, 1, &f32, &dst, &need, nullptr, nullptr));
    EXPECT_EQ(buf[0], init_value(0, 0));
  }
  SMD_OK(smd_comm_destroy(c));
}

// One rank's buffer too small (or of another datatype) while the others'
// are right: that rank gets SMD_ERR_INVALID_ARGUMENT, every other rank
// SMD_ERR_MISMATCH (their buffers' contents unspecified, as after any
// failed collective), none waits; the refusing rank's buffers untouched.
TEST(Sharded, FetchIntoBadBufferOnOneRankFailsOnEveryRank) {
  if (size() == 1) GTEST_SKIP() << "needs two ranks";
  const bool last = rank() == size() - 1;
  for (int wrong : {0, 1}) {  // 0: too small, 1: float64
    smd_comm_t *c = nullptr;
    SMD_OK(smd_comm_dup(world(), &c));
    {
      Set s;
      make(s, config(), {64, 1000}, c);
      std::vector<int32_t> ids = {0, 1};
      std::vector<std::vector<float>> bufs;
      std::vector<void *> dsts;
      std::vector<size_t> caps;
      std::vector<smd_datatype_t> types(2, SMD_FLOAT32);
      for (int32_t id : ids) {
        size_t need = 0;
        SMD_OK(smd_sharded_gathered_count(s.set, id, &need));
        bufs.emplace_back(need, -1.0f);
        caps.push_back(need);
      }
      for (auto &b : bufs) dsts.push_back(b.data());
      if (last && wrong == 0) caps[1] -= 1;
      if (last && wrong == 1) types[1] = SMD_FLOAT64;
      smd_result_t r = smd_sharded_fetch_into(s.set, ids.data(), ids.size(), types.data(),
                                              dsts.data(), caps.data(), nullptr, nullptr);
      EXPECT_EQ(r, last ? SMD_ERR_INVALID_ARGUMENT : SMD_ERR_MISMATCH) << smd_last_error();
      if (last)
        for (const auto &b : bufs)
          for (float v : b) ASSERT_EQ(v, -1.0f) << "a buffer was written";
    }
    SMD_OK(smd_comm_destroy(c));
    SMD_OK(smd_barrier(world(), nullptr));
  }
}

// Ranks gathering other parameters of one size into their buffers.
TEST(Sharded, FetchIntoOtherParametersMismatchOnEveryRank) {
  if (size() == 1) GTEST_SKIP() << "needs two ranks";
  smd_comm_t *c = nullptr;
  SMD_OK(smd_comm_dup(world(), &c));
  {
    Set s;
    make(s, config(), {64, 64}, c);
    int32_t id = rank() == size() - 1 ? 1 : 0;
    size_t need = 0;
    SMD_OK(smd_sharded_gathered_count(s.set, id, &need));
    std::vector<float> buf(need);
    void *dst = buf.data();
    smd_datatype_t f32 = SMD_FLOAT32;
    EXPECT_EQ(smd_sharded_fetch_into(s.set, &id, 1, &f32, &dst, &need, nullptr, nullptr),
              SMD_ERR_MISMATCH)
        << smd_last_error();
  }
  SMD_OK(smd_comm_destroy(c));
  SMD_OK(smd_barrier(world(), nullptr));
}

}  // namespace

int main(int argc, char **argv) {
  mptest::install(&argc, argv);
  return RUN_ALL_TESTS();
}
