#include "ddprun/errors/node_stacks.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace ddprun::errors {
namespace {

NodeStacks sample() {
  NodeStacks s;
  s.node = "gpu-07";
  s.method = "py-spy";
  s.files = {"/logs/run/attempt_0/stacks_gpu-07.txt"};
  s.groups = {
      StackGroup{{9}, "wait_for_data (train.py:12)"},
      StackGroup{{8, 10, 11, 12, 13, 14, 15}, "all_reduce (c10d.py:1536) <- step (x.py:5)"}};
  return s;
}

TEST(NodeStacks, EncodesOneRecordPerLineWithRankRanges) {
  EXPECT_EQ(encode_node_stacks(sample()),
            "ddprun-stacks 1\n"
            "node gpu-07\n"
            "method py-spy\n"
            "file /logs/run/attempt_0/stacks_gpu-07.txt\n"
            "group 9 wait_for_data (train.py:12)\n"
            "group 8,10-15 all_reduce (c10d.py:1536) <- step (x.py:5)\n");
}

TEST(NodeStacks, RoundTrips) {
  auto back = decode_node_stacks(encode_node_stacks(sample()));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, sample());
}

TEST(NodeStacks, RoundTripsAnyBytesInTheFields) {
  NodeStacks s;
  std::string every;
  for (int c = 0; c < 256; ++c) {
    every += static_cast<char>(c);
  }
  s.node = "a\nb%41\r";
  s.method = every;
  s.files = {"", "x y\n"};
  s.groups = {StackGroup{{0}, every}, StackGroup{{1, 2}, ""}};
  const std::string text = encode_node_stacks(s);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 7);
  auto back = decode_node_stacks(text);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, s);
}

TEST(NodeStacks, StaysSmallForThousandsOfRanksInOneGroup) {
  NodeStacks s{"n", "faulthandler", {StackGroup{{}, "all_reduce (c10d.py:1536)"}}, {}};
  for (int r = 0; r < 60000; ++r) {
    s.groups[0].ranks.push_back(r);
  }
  EXPECT_LT(encode_node_stacks(s).size(), 100U);
}

TEST(NodeStacks, SkipsUnknownRecordsAndBlankLines) {
  auto back = decode_node_stacks("ddprun-stacks 1\nnode n\n\nlater thing\ngroup 3 f\n");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->node, "n");
  ASSERT_EQ(back->groups.size(), 1U);
  EXPECT_EQ(back->groups[0].ranks, std::vector<int>{3});
}

TEST(NodeStacks, RefusesGarbageWithOneLineNamingTheLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "expected 'ddprun-stacks 1' first, got ''"},
      {"ddprun-stacks 2\nnode n\n", "got 'ddprun-stacks 2'"},
      {"ddprun-stacks 1\nmethod m\n", "no 'node' line"},
      {"ddprun-stacks 1\nnode n\ngroup\n", "line 3 'group': expected ranks"},
      {"ddprun-stacks 1\nnode n\ngroup 5-3 f\n", "line 3"},
      {"ddprun-stacks 1\nnode n\ngroup 1,1 f\n", "distinct"},
      {"ddprun-stacks 1\nnode n\ngroup -1 f\n", "expected ranks"},
      {"ddprun-stacks 1\nnode n\ngroup 0-99999999 f\n", "expected ranks"},
      {"ddprun-stacks 1\nnode n\ngroup 0-65536 f\n", "at most 65536 in all"},
      {"ddprun-stacks 1\nnode n%4\n", "line 2 'node n%4': a '%' not followed by two hex digits"},
      {"ddprun-stacks 1\nnode %zz\n", "two hex digits"},
      {"\x01\x02\x03\n", "got '\\x01\\x02\\x03'"},
  };
  for (const auto& [text, want] : cases) {
    auto got = decode_node_stacks(text);
    ASSERT_FALSE(got) << text;
    EXPECT_NE(got.error().message.find(want), std::string::npos) << got.error().message;
    EXPECT_EQ(got.error().message.find('\n'), std::string::npos) << got.error().message;
  }
}

TEST(NodeStacks, RefusesMoreRanksThanTheLimitInAll) {
  constexpr int k_quarter = static_cast<int>(k_max_decoded_ranks / 4);
  std::string text = "ddprun-stacks 1\nnode n\n";
  for (int g = 0; g < 5; ++g) {
    const int lo = g * k_quarter;
    text += "group " + std::to_string(lo) + "-" + std::to_string(lo + k_quarter - 1) + " f\n";
  }
  ASSERT_TRUE(decode_node_stacks(text.substr(0, text.rfind("group"))));
  auto got = decode_node_stacks(text);
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().message.find("line 7"), std::string::npos) << got.error().message;
}

TEST(MergeStackGroups, JoinsTheSameFramesAcrossNodesSmallestGroupsFirst) {
  NodeStacks a{"a",
               "py-spy",
               {StackGroup{{1}, "wait (t.py:1)"}, StackGroup{{0, 2, 3}, "all_reduce (c.py:9)"}},
               {}};
  NodeStacks b{"b",
               "faulthandler",
               {StackGroup{{5}, "load (d.py:4)"}, StackGroup{{4, 6, 7}, "all_reduce (c.py:9)"}},
               {}};
  auto merged = merge_stack_groups({a, b});
  ASSERT_EQ(merged.size(), 3U);
  EXPECT_EQ(merged[0], (StackGroup{{1}, "wait (t.py:1)"}));
  EXPECT_EQ(merged[1], (StackGroup{{5}, "load (d.py:4)"}));
  EXPECT_EQ(merged[2], (StackGroup{{0, 2, 3, 4, 6, 7}, "all_reduce (c.py:9)"}));
  EXPECT_EQ(render_stack_report(merged).back(), "ranks 0,2-4,6-7: all_reduce (c.py:9)");
}

TEST(MergeStackGroups, DropsDuplicateRanksAndEmptyGroups) {
  NodeStacks a{"a", "m", {StackGroup{{1, 2}, "f"}, StackGroup{{}, "g"}}, {}};
  NodeStacks b{"a", "m", {StackGroup{{2, 3}, "f"}}, {}};
  auto merged = merge_stack_groups({a, b});
  ASSERT_EQ(merged.size(), 1U);
  EXPECT_EQ(merged[0].ranks, (std::vector<int>{1, 2, 3}));
  EXPECT_TRUE(merge_stack_groups({}).empty());
}

}  // namespace
}  // namespace ddprun::errors
