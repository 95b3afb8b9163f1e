// The link between nodes is measured when the world forms
// (coll/calibrate/network_probe.h) and prices the choices of communicators
// that span nodes: every rank holds the same values (its predictions of a
// call equal every other rank's), SMD_CALIBRATE=off gives the defaults
// back (another prediction). Registered on 2 and 3 fake nodes of shm+tcp,
// with the allreduce a flat ring across them (priced by the network alone).
#include <gtest/gtest.h>
#include <smd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "mp_env.h"

using mptest::rank;
using mptest::size;
using mptest::world;

namespace {

// In helpers that return a value (SMD_OK returns from the test).
#define EXPECT_SMD_OK(call) EXPECT_EQ((call), SMD_SUCCESS) << #call << ": " << smd_last_error()

// The cost model's prediction of a 1 MiB float32 allreduce on a fresh
// duplicate of the world, made under SMD_CALIBRATE=`calibrate`.
double predicted_allreduce_us(const char *calibrate) {
  setenv("SMD_CALIBRATE", calibrate, 1);
  smd_comm_t *c = nullptr;
  EXPECT_SMD_OK(smd_comm_dup(world(), &c));
  std::vector<float> x(256 * 1024, 1.0f);
  EXPECT_SMD_OK(smd_allreduce(x.data(), x.data(), x.size(), SMD_FLOAT32, SMD_SUM, c, nullptr));
  EXPECT_EQ(x[0], float(size()));
  smd_comm_stats_t st{};
  st.struct_size = sizeof st;
  EXPECT_SMD_OK(smd_comm_get_stats(c, &st));
  EXPECT_SMD_OK(smd_comm_destroy(c));
  unsetenv("SMD_CALIBRATE");
  return st.last_predicted_us;
}

int node_count() {
  int local = 0, local_size = 0;
  EXPECT_SMD_OK(smd_comm_local_rank(world(), &local));
  EXPECT_SMD_OK(smd_comm_local_size(world(), &local_size));
  // Fake nodes of equal size in these registrations.
  return size() / local_size;
}

// Every rank's value of v.
std::vector<double> everyones(double v) {
  std::vector<double> all(size_t(size()), 0.0);
  EXPECT_SMD_OK(smd_allgather(&v, all.data(), 1, SMD_FLOAT64, world(), nullptr));
  return all;
}

TEST(NetworkProbe, EveryRankPricesWithTheSameLink) {
  double mine = predicted_allreduce_us("auto");
  EXPECT_GT(mine, 0.0);
  for (double theirs : everyones(mine)) EXPECT_EQ(theirs, mine);
}

// (On one node SMD_CALIBRATE=off also drops the node's calibration, so
// the predictions differ there for another reason.)
TEST(NetworkProbe, OffGivesTheDefaultsBackAcrossNodes) {
  if (node_count() < 2) GTEST_SKIP() << "needs ranks on two nodes";
  double measured = predicted_allreduce_us("auto");
  double defaults = predicted_allreduce_us("off");
  for (double theirs : everyones(defaults)) EXPECT_EQ(theirs, defaults);
  EXPECT_NE(measured, defaults) << "the measured link priced nothing";
}

}  // namespace

int main(int argc, char **argv) {
  mptest::install(&argc, argv);
  return RUN_ALL_TESTS();
}
