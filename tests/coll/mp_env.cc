#include "mp_env.h"

#include <cstdio>
#include <string>

namespace mptest {
namespace {

smd_comm_t *g_world = nullptr;
int g_rank = 0, g_size = 1;

class WorldEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    smd_result_t r = smd_comm_init(nullptr, &g_world);
    if (r != SMD_SUCCESS) {
      fprintf(stderr, "smd_comm_init failed: %s: %s\n", smd_result_string(r), smd_last_error());
      GTEST_FAIL();
    }
    smd_comm_rank(g_world, &g_rank);
    smd_comm_size(g_world, &g_size);
  }
  void TearDown() override {
    if (g_world) {
      smd_result_t r = smd_comm_destroy(g_world);
      // A failure here fails the program (gtest counts it against the
      // run as a whole), not only a line on stderr.
      EXPECT_EQ(r, SMD_SUCCESS) << "smd_comm_destroy: " << smd_last_error();
    }
  }
};

// Prints only failed assertions (used on ranks other than 0). gtest holds
// its own lock while it reports a result, so asking it for the current
// test from here would deadlock: the name is noted when a test starts.
class FailurePrinter : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo &t) override {
    current_ = std::string(t.test_suite_name()) + "." + t.name();
  }
  void OnTestEnd(const ::testing::TestInfo &) override { current_ = kOutside; }
  void OnTestPartResult(const ::testing::TestPartResult &r) override {
    if (r.failed())
      fprintf(stderr, "%s:%d: Failure in %s\n%s\n", r.file_name() ? r.file_name() : "?",
              r.line_number(), current_.c_str(), r.summary());
  }
  static constexpr const char *kOutside = "the test environment (set-up or tear-down)";
  std::string current_ = kOutside;
};

}  // namespace

smd_comm_t *world() { return g_world; }
int rank() { return g_rank; }
int size() { return g_size; }

void install(int *argc, char **argv) {
  ::testing::InitGoogleTest(argc, argv);
  ::testing::AddGlobalTestEnvironment(new WorldEnvironment());
  const char *r = getenv("SMD_RANK");
  if (r && atoi(r) != 0) {
    auto &listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter());
  }
}

}  // namespace mptest
