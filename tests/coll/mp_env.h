// The world of a multi-process test program: every rank runs the same
// GoogleTest cases in the same order under smdrun. Rank 0 prints the
// normal report; other ranks print only failures (tagged by smdrun).
#pragma once

#include <gtest/gtest.h>
#include <smd.h>

namespace mptest {

smd_comm_t *world();
int rank();
int size();

// Installs the world environment and quiet listeners; call from main().
void install(int *argc, char **argv);

}  // namespace mptest

#define SMD_OK(call)                                                     \
  do {                                                                   \
    ASSERT_EQ((call), SMD_SUCCESS) << #call << ": " << smd_last_error(); \
  } while (0)
