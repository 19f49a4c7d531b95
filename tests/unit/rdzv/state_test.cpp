#include "ddprun/rdzv/state.hpp"

#include <gtest/gtest.h>

#include "unit/rdzv/fixtures.hpp"

namespace ddprun::rdzv {
namespace {

RdzvState rich_state() {
  NodeDesc a = test::node("10.0.0.1", 11);
  a.nproc = 8;
  a.role = "trainer";
  a.is_endpoint_host = true;
  NodeDesc b = test::node("10.0.0.2", 22);
  b.node_index = 3;
  b.local_id = 1;
  RdzvState s = test::running({a, b}, 1'700'000'000'000, 5);
  s.deadline = 1'700'000'030'000;
  s.wait_list[test::node("10.0.0.3").id()] = test::node("10.0.0.3");
  s.last_heartbeats[test::node("10.0.0.3").id()] = 1'700'000'000'001;
  s.failed_round = FailedRound{5, b.id()};
  s.left.insert(test::node("10.0.0.4", 44).id());
  return s;
}

TEST(RdzvState, EncodeDecodeRoundTrip) {
  const RdzvState s = rich_state();
  auto decoded = decode_state(encode_state(s));
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(*decoded, s);
}

TEST(RdzvState, EmptyStateRoundTrip) {
  auto decoded = decode_state(encode_state(RdzvState{}));
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(*decoded, RdzvState{});
}

TEST(RdzvState, StateWithoutLeftDecodesWithNoneLeft) {
  auto decoded =
      decode_state(R"({"version":1,"round":2,"complete":true,"closed":false,"deadline":null,)"
                   R"("participants":{},"wait_list":{},"last_heartbeats":{},"failed_round":null})");
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_TRUE(decoded->left.empty());
  EXPECT_EQ(decoded->round, 2);
}

TEST(RdzvState, EncodingIsDeterministic) {
  EXPECT_EQ(encode_state(rich_state()), encode_state(rich_state()));
}

TEST(RdzvState, RejectsGarbage) {
  const char* inputs[] = {
      "",
      "not json",
      "Y2FuaW1hZGFt",  // torch's base64 "no state" sentinel
      "[]",
      "{}",
      R"({"version":2,"round":0})",
      R"({"version":1,"round":"zero","complete":false,"closed":false,"deadline":null,)"
      R"("participants":{},"wait_list":{},"last_heartbeats":{},"failed_round":null})",
      R"({"version":1,"round":0,"complete":false,"closed":false,"deadline":null,)"
      R"("participants":{"x":{"rank":0}},"wait_list":{},"last_heartbeats":{},"failed_round":null})",
  };
  for (const char* in : inputs) {
    auto r = decode_state(in);
    ASSERT_FALSE(r) << in;
    EXPECT_EQ(r.error().code, ErrorCode::protocol) << in;
    EXPECT_NE(r.error().message.find("not a ddprun state"), std::string::npos) << in;
  }
}

TEST(RdzvState, NodeIdLooksLikeTorch) {
  EXPECT_EQ(test::node("localhost", 20064).id(), "localhost_20064_0");
}

TEST(RdzvState, KeysAreOurOwn) {
  EXPECT_EQ(state_key("job7"), "ddprun/rdzv/job7/state");
  EXPECT_EQ(round_prefix("job7", 3), "ddprun/rdzv/job7/3/");
}

}  // namespace
}  // namespace ddprun::rdzv
