// The barrier on one node (barrier_direct: the tiny path's one line per
// member, nothing published): no rank leaves a barrier before the last
// one entered it, over thousands of barriers with a different late rank
// each time; and a barrier that meets another collective, or a different
// number of calls, fails with SMD_ERR_MISMATCH on every rank.
#include <gtest/gtest.h>
#include <smd.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "mismatch_case.h"
#include "mp_env.h"

using mptest::rank;
using mptest::size;
using mptest::world;

namespace {

int64_t now_ns() {
  // CLOCK_MONOTONIC (steady_clock on Linux) is one clock for every process
  // of the machine, which the ranks of these tests share.
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Barrier k's late rank (k % size) spins a few microseconds before it
// enters; every rank notes when it entered and left. Afterwards the notes
// are gathered: each barrier's earliest exit must follow its latest entry.
TEST(Barrier, NoRankLeavesBeforeTheLastEnters) {
  constexpr int kBarriers = 4000;
  std::vector<int64_t> notes(2 * kBarriers);  // entry, exit
  for (int k = 0; k < kBarriers; ++k) {
    if (k % size() == rank()) {
      int64_t until = now_ns() + 2000 + (k % 7) * 1000;
      while (now_ns() < until) {
      }
    }
    notes[2 * k] = now_ns();
    SMD_OK(smd_barrier(world(), nullptr));
    notes[2 * k + 1] = now_ns();
  }
  std::vector<int64_t> all(notes.size() * static_cast<size_t>(size()));
  SMD_OK(smd_allgather(notes.data(), all.data(), notes.size(), SMD_INT64, world(), nullptr));
  int early = 0;
  for (int k = 0; k < kBarriers; ++k) {
    int64_t last_entry = INT64_MIN, first_exit = INT64_MAX;
    for (int r = 0; r < size(); ++r) {
      const int64_t *mine = all.data() + static_cast<size_t>(r) * notes.size();
      last_entry = std::max(last_entry, mine[2 * k]);
      first_exit = std::min(first_exit, mine[2 * k + 1]);
    }
    if (first_exit < last_entry && early++ < 5)
      ADD_FAILURE() << "barrier " << k << ": a rank left " << (last_entry - first_exit)
                    << " ns before the last one entered";
  }
  EXPECT_EQ(early, 0);
}

// Barriers alone, many of them (the descriptor lines are reused every 64
// rounds), then one collective that must still find every rank in step.
TEST(Barrier, ManyInARowStayInStep) {
  smd_comm_t *c = nullptr;
  SMD_OK(smd_comm_dup(world(), &c));
  for (int i = 0; i < 20000; ++i) SMD_OK(smd_barrier(c, nullptr));
  int64_t x = rank() + 1;
  SMD_OK(smd_allreduce(&x, &x, 1, SMD_INT64, SMD_SUM, c, nullptr));
  EXPECT_EQ(x, int64_t(size()) * (size() + 1) / 2);
  SMD_OK(smd_comm_destroy(c));
}

// A barrier against another call on some ranks: every rank fails (a rank
// whose call returned before it could tell learns at its next barrier).
TEST(Barrier, AgainstAnotherCallFailsEverywhere) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  struct Case {
    const char *what;
    int which;
  } cases[] = {{"barrier vs 8-byte allreduce", 0},
               {"barrier vs 64 KiB allreduce (not tiny)", 1},
               {"barrier vs broadcast (its root waits for nobody)", 2},
               {"one barrier more on some ranks, then an allreduce", 3}};
  std::vector<float> in(16384, 1.0f), out(16384);
  for (auto &k : cases) {
    // The broadcast's root alone calls it (a receiver that agreed with its
    // root would leave that call with the data and no error).
    bool odd = k.which == 2 ? rank() == 1 : rank() % 2 == 1;
    auto barrier = [](smd_comm_t *c) { return smd_barrier(c, nullptr); };
    auto mismatched = [&](smd_comm_t *c) {
      switch (k.which) {
        case 0:
          return odd ? smd_allreduce(in.data(), out.data(), 2, SMD_FLOAT32, SMD_SUM, c, nullptr)
                     : smd_barrier(c, nullptr);
        case 1:
          return odd ? smd_allreduce(in.data(), out.data(), in.size(), SMD_FLOAT32, SMD_SUM, c,
                                     nullptr)
                     : smd_barrier(c, nullptr);
        case 2:
          return odd ? smd_broadcast(in.data(), out.data(), 2, SMD_FLOAT32, 1, c, nullptr)
                     : smd_barrier(c, nullptr);
        default: {
          smd_result_t r = odd ? SMD_SUCCESS : smd_barrier(c, nullptr);
          if (r == SMD_SUCCESS)
            r = smd_allreduce(in.data(), out.data(), 2, SMD_FLOAT32, SMD_SUM, c, nullptr);
          return r;
        }
      }
    };
    ASSERT_NO_FATAL_FAILURE(mptest::expect_mismatch(k.what, 3, barrier, mismatched, true));
  }
}

}  // namespace

int main(int argc, char **argv) {
  mptest::install(&argc, argv);
  return RUN_ALL_TESTS();
}
