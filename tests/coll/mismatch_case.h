// One case of a collective whose arguments differ between ranks, run the
// way the mismatch tests run theirs: on a fresh duplicate of the world,
// after agreeing calls (the mismatch is not the first round), every rank
// must end with SMD_ERR_MISMATCH. A call that can return before anyone
// could tell (a broadcast root, a barrier's last rank) learns it at a
// barrier right after, when `then_barrier` says so. Call it under
// ASSERT_NO_FATAL_FAILURE: a rank out of step must not go on to the next case.
#pragma once

#include <gtest/gtest.h>
#include <smd.h>

#include <functional>

#include "mp_env.h"

namespace mptest {

using CommCall = std::function<smd_result_t(smd_comm_t *)>;

inline void expect_mismatch(const char *what, int agreeing_rounds, const CommCall &agreeing,
                            const CommCall &mismatched, bool then_barrier) {
  smd_comm_t *c = nullptr;
  SMD_OK(smd_comm_dup(world(), &c));
  for (int i = 0; i < agreeing_rounds; ++i) SMD_OK(agreeing(c));
  smd_result_t r = mismatched(c);
  if (r == SMD_SUCCESS && then_barrier) r = smd_barrier(c, nullptr);
  EXPECT_EQ(r, SMD_ERR_MISMATCH) << what << ": " << smd_last_error();
  SMD_OK(smd_comm_destroy(c));
  SMD_OK(smd_barrier(world(), nullptr));
}

}  // namespace mptest
