// How the ranks' output reaches smdrun's stdout and stderr.
#include <gtest/gtest.h>

#include <algorithm>

#include "smdrun_process.h"

namespace smdrun_test {
namespace {

using Lines = std::vector<std::string>;

TEST(SmdrunOutput, LinesAreTaggedPerRankAndStream) {
  RunResult r = run_smdrun({"-n", "3", helper_path(), "out=one", "err=warn", "outpart=tw",
                            "sleep=0.05", "out=o", "errpart=last words"});
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  for (int rank = 0; rank < 3; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    EXPECT_EQ(rank_lines(r.out, rank), (Lines{"one", "two"}));
    // The final line had no newline; smdrun completes it at exit.
    EXPECT_EQ(rank_lines(r.err, rank), (Lines{"warn", "last words"}));
  }
  EXPECT_EQ(r.out.back(), '\n');
  EXPECT_EQ(r.err.back(), '\n');
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 6);
}

TEST(SmdrunOutput, UntaggedOutputPassesThroughUntouched) {
  RunResult r = run_smdrun(
      {"--no-tag-output", "-n", "1", helper_path(), "outpart=a", "out=b", "errpart=no newline"});
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  EXPECT_EQ(r.out, "ab\n");
  EXPECT_EQ(r.err, "no newline");
}

// Each rank writes megabytes to both streams, alternating line by line:
// smdrun must keep reading both pipes of every rank or they would block.
TEST(SmdrunOutput, MegabytesFromEveryRankOnBothStreamsArriveWhole) {
  const int n = 4;
  const long bytes = 3 << 20;
  RunResult r =
      run_smdrun({"-n", std::to_string(n), helper_path(), "spam=" + std::to_string(bytes)});
  ASSERT_EQ(r.exit_code(), 0) << r.err.substr(0, 500);
  const std::string pad(80, 'x');
  for (int rank = 0; rank < n; ++rank) {
    for (const std::string *stream : {&r.out, &r.err}) {
      Lines lines = rank_lines(*stream, rank);
      ASSERT_GT(lines.size() * 80, static_cast<size_t>(bytes) / 2);
      // Lines of one rank and stream arrive whole and in order: seq is
      // even on stdout and odd on stderr, stepping by 2.
      long expect = stream == &r.out ? 0 : 1;
      for (const std::string &line : lines) {
        ASSERT_EQ(line, std::to_string(rank) + " " + std::to_string(expect) + " " + pad);
        expect += 2;
      }
    }
  }
}

}  // namespace
}  // namespace smdrun_test
