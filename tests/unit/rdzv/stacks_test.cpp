#include "ddprun/rdzv/stacks.hpp"

#include "ddprun/rdzv/decide.hpp"  // to_string(RunSignal)

#include <gtest/gtest.h>

namespace ddprun::rdzv {
namespace {

using namespace std::chrono_literals;

StacksRequest sample() {
  return StacksRequest{2, "gpu-1_42_0", 1, "no worker output for 300s \"quoted\"\n", 1000, 31000};
}

TEST(RdzvStacksRequest, RoundTripsThroughJson) {
  const std::string text = encode_stacks_request(sample());
  EXPECT_EQ(text.find('\n'), std::string::npos);
  auto back = decode_stacks_request(text);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, sample());
}

TEST(RdzvStacksRequest, RefusesOtherTextWithOneLine) {
  for (const std::string bad : {"", "{", "{}", "[1]", "{\"seq\":\"x\"}", "\n\n"}) {
    auto r = decode_stacks_request(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::protocol);
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos) << r.error().message;
  }
}

TEST(RdzvStacksRequest, AnotherNodesRequestStandsWhileItCollects) {
  const auto r = sample();  // gpu-1's, collecting until 31000
  EXPECT_TRUE(is_collecting_elsewhere(r, "gpu-2_42_0", 31000));
  EXPECT_FALSE(is_collecting_elsewhere(r, "gpu-2_42_0", 31001)) << "its collection ended";
  EXPECT_FALSE(is_collecting_elsewhere(r, "gpu-1_42_0", 2000)) << "its own asks again";
  EXPECT_FALSE(is_collecting_elsewhere(std::nullopt, "gpu-2_42_0", 2000));
}

TEST(RdzvStacksRequest, NextRequestTakesTheNextSeq) {
  const auto first = next_stacks_request(std::nullopt, "a_1_0", 0, "stall", 500, 2s);
  EXPECT_EQ(first, (StacksRequest{1, "a_1_0", 0, "stall", 500, 2500}));
  const auto second = next_stacks_request(first, "b_1_0", 3, "timer", 9000, 1s);
  EXPECT_EQ(second, (StacksRequest{2, "b_1_0", 3, "timer", 9000, 10000}));
}

TEST(RdzvStacksRequest, ANodeAnswersEachOtherNodesRequestOnce) {
  const auto r = sample();
  EXPECT_TRUE(should_answer(r, "gpu-2_42_0", 0));
  EXPECT_TRUE(should_answer(r, "gpu-2_42_0", 1)) << "an earlier request was seen";
  EXPECT_FALSE(should_answer(r, "gpu-2_42_0", 2)) << "seen already";
  EXPECT_FALSE(should_answer(r, "gpu-1_42_0", 0)) << "the requester itself";
}

TEST(RdzvStacksRequest, AnsweringRanksLeaveOutCollectorAndRequester) {
  EXPECT_EQ(answering_ranks(4, 0, 0), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(answering_ranks(4, 2, 1), (std::vector<int>{0, 3}));
  EXPECT_TRUE(answering_ranks(1, 0, 0).empty());
}

TEST(RdzvStacksRequest, UnansweredNodesByAddressWhenKnownElseByGroupRank) {
  using Names = std::vector<std::string>;
  NodeDesc a{"gpu-a", 1, 0, 1, "default", false, std::nullopt};
  NodeDesc b = a;
  b.addr = "gpu-b";
  NodeDesc c = a;
  c.addr = "gpu-c";
  EXPECT_EQ(unanswered_names({0, 2}, {a, b, c}), (Names{"gpu-a", "gpu-c"}));
  EXPECT_EQ(unanswered_names({1, 7}, {a, b, c}), (Names{"gpu-b", "group rank 7"}));
  EXPECT_EQ(unanswered_names({7}, {}), (Names{"group rank 7"}));
  EXPECT_TRUE(unanswered_names({}, {a}).empty());
  NodeDesc a2 = a;  // a second agent on the same host: full ids
  a2.local_id = 1;
  EXPECT_EQ(unanswered_names({1}, {a, a2}), (Names{"gpu-a_1_1"}));
}

TEST(RdzvStacksRequest, TheSignalHasAName) {
  EXPECT_EQ(to_string(RunSignal::stacks_requested), "stacks_requested");
}

}  // namespace
}  // namespace ddprun::rdzv
