// Sharded parameter sets, fetch_into: gathers into the caller's buffers
// (no set cache, no live bound), refuses bad buffers, fails on every rank
// when one rank's buffer is bad, and mismatches when ranks fetch others.
#include "sharded_set.h"

using namespace shardedtest;

namespace {

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
