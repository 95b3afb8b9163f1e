// Unit tests of the per-stream line tagger.
#include <gtest/gtest.h>

#include "line_tagger.h"

namespace smdrun {
namespace {

TEST(SmdrunLineTagger, TagsWholeLinesAcrossChunks) {
  LineTagger tagger("[3] ");
  std::string out;
  tagger.feed("al", out);
  EXPECT_EQ(out, "");
  tagger.feed("pha\nbe", out);
  EXPECT_EQ(out, "[3] alpha\n");
  tagger.feed("ta\n\ngamma\n", out);
  EXPECT_EQ(out, "[3] alpha\n[3] beta\n[3] \n[3] gamma\n");
  tagger.finish(out);
  EXPECT_EQ(out, "[3] alpha\n[3] beta\n[3] \n[3] gamma\n");
}

TEST(SmdrunLineTagger, FinishCompletesAPartialLine) {
  LineTagger tagger("[0] ");
  std::string out;
  tagger.feed("done\nno newline", out);
  tagger.finish(out);
  EXPECT_EQ(out, "[0] done\n[0] no newline\n");
}

TEST(SmdrunLineTagger, OverlongPartialLinesAreCutIntoTaggedPieces) {
  LineTagger tagger("[1] ", 4);
  std::string out;
  tagger.feed("ab", out);
  tagger.feed("cdefgh", out);
  EXPECT_EQ(out, "[1] abcd\n[1] efgh\n");
  tagger.feed("ij\nk", out);
  tagger.finish(out);
  EXPECT_EQ(out, "[1] abcd\n[1] efgh\n[1] ij\n[1] k\n");
}

TEST(SmdrunLineTagger, LongLinesCompleteInOneChunkStayWhole) {
  LineTagger tagger("[1] ", 4);
  std::string out;
  tagger.feed("abcdefgh\n", out);
  EXPECT_EQ(out, "[1] abcdefgh\n");
}

TEST(SmdrunLineTagger, EmptyPrefixPassesBytesThrough) {
  LineTagger tagger("");
  std::string out;
  tagger.feed("par", out);
  tagger.feed("tial", out);
  tagger.finish(out);
  EXPECT_EQ(out, "partial");
}

}  // namespace
}  // namespace smdrun
