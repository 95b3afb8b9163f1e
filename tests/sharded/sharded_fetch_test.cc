// Sharded parameter sets (smd_sharded_*), fetching: shards are the
// parameter's pieces padded with zeros, fetches gather the registered
// values, persistent parameters stay whole, the max-live bound holds under
// random orders, the recorded order prefetches (in its order, inside the
// bound), and gathers across nodes take the configured form.
#include "sharded_set.h"

using namespace shardedtest;

namespace {

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

}  // namespace
