// The sharded-set tests (sharded_*_test.cc) run as one program under
// smdrun on 1-4 ranks of a node or on fake nodes (meson.build).
#include <gtest/gtest.h>

#include "../coll/mp_env.h"

int main(int argc, char **argv) {
  mptest::install(&argc, argv);
  return RUN_ALL_TESTS();
}
