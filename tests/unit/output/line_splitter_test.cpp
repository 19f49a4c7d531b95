#include "ddprun/output/line_splitter.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ddprun::output {
namespace {

struct Collector {
  std::vector<std::string> lines;
  LineSplitter::OnLine fn() {
    return [this](std::string_view l) { lines.emplace_back(l); };
  }
};

TEST(LineSplitter, SplitsWholeLinesAndKeepsPartial) {
  LineSplitter s;
  Collector c;
  s.feed("a\nbc\nde", c.fn());
  EXPECT_EQ(c.lines, (std::vector<std::string>{"a", "bc"}));
  EXPECT_EQ(s.pending_bytes(), 2U);
  s.feed("f\n\n", c.fn());
  EXPECT_EQ(c.lines, (std::vector<std::string>{"a", "bc", "def", ""}));
}

TEST(LineSplitter, FlushesPartialLastLineOnFinish) {
  LineSplitter s;
  Collector c;
  s.feed("x\nno newline", c.fn());
  s.finish(c.fn());
  EXPECT_EQ(c.lines, (std::vector<std::string>{"x", "no newline"}));
  s.finish(c.fn());
  EXPECT_EQ(c.lines.size(), 2U);
}

TEST(LineSplitter, SplitsLongLinesWithoutLosingBytes) {
  LineSplitter s(4);
  Collector c;
  s.feed("abcdefghij\n", c.fn());
  EXPECT_EQ(c.lines, (std::vector<std::string>{"abcd", "efgh", "ij"}));
}

TEST(LineSplitter, SplitsLongLinesArrivingInPieces) {
  LineSplitter s(4);
  Collector c;
  for (char ch : std::string("abcdefghij\nkl\nmnopq")) {
    s.feed(std::string_view(&ch, 1), c.fn());
  }
  s.finish(c.fn());
  EXPECT_EQ(c.lines, (std::vector<std::string>{"abcd", "efgh", "ij", "kl", "mnop", "q"}));
}

TEST(LineSplitter, LineOfExactlyMaxLengthIsOneLine) {
  LineSplitter s(4);
  Collector c;
  s.feed("ab", c.fn());
  s.feed("cd\nwxyz\n", c.fn());
  EXPECT_EQ(c.lines, (std::vector<std::string>{"abcd", "wxyz"}));
}

TEST(RenderPrefix, DefaultTemplateMatchesTorchrun) {
  EXPECT_EQ(render_prefix(k_default_prefix_template, "default", 5, 0), "[default0]:");
  EXPECT_EQ(render_prefix(k_default_prefix_template, "trainer", 3, 1), "[trainer1]:");
}

TEST(RenderPrefix, SafeSubstituteSemantics) {
  EXPECT_EQ(render_prefix("[${rank}]: ", "r", 12, 3), "[12]: ");
  EXPECT_EQ(render_prefix("$role_name-$local_rank|$rank", "w", 1, 2), "w-2|1");
  EXPECT_EQ(render_prefix("$$rank ${other} $unknown $ ${rank", "w", 1, 2),
            "$rank ${other} $unknown $ ${rank");
  EXPECT_EQ(render_prefix("$$${rank}", "w", 7, 2), "$7");
  EXPECT_EQ(render_prefix("$rank0", "w", 7, 2), "$rank0");
  EXPECT_EQ(render_prefix("end$", "w", 7, 2), "end$");
}

// torch >= 2.9 (pytorch#162018): ${pid}, the worker's.
TEST(RenderPrefix, PidIsTheWorkers) {
  EXPECT_EQ(render_prefix("[${rank}|${pid}]: ", "w", 3, 1, 4242), "[3|4242]: ");
  EXPECT_EQ(render_prefix("$pid:", "w", 3, 1, 4242), "4242:");
  EXPECT_EQ(render_prefix("$$${pid}", "w", 3, 1, 4242), "$4242");
  EXPECT_EQ(render_prefix("${pid}", "w", 3, 1), "${pid}") << "not known: left as written";
}

}  // namespace
}  // namespace ddprun::output
