// Sharded parameter sets, bad calls and disagreement: clear errors for bad
// arguments, registrations and configurations, and SMD_ERR_MISMATCH on every
// rank when ranks register, fetch or reduce different parameters (each
// collective carries its parameters' ids as its subject).
#include "sharded_set.h"

using namespace shardedtest;

namespace {

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

}  // namespace
