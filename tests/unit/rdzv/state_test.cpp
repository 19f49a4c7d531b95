#include "ddprun/rdzv/state.hpp"

#include "ddprun/rdzv/members.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "unit/rdzv/fixtures.hpp"

namespace ddprun::rdzv {
namespace {

RoundHeader rich_header() {
  RoundHeader h = test::complete(5, 2, 3);
  h.deadline = 1'700'000'030'000;
  h.checked = 2;
  h.closer = "10.0.0.9_1_0";
  h.closing_since = 1'700'000'000'000;
  h.workers = 12;
  h.error = "--node-rank 0 is used by two agents";
  h.failed_round = FailedRound{5,
                               "10.0.0.2_22_1",
                               1'700'000'020'000,
                               "rank 3 \"failed\"",
                               "rank 3: exitcode 1: ValueError",
                               true};
  h.failures = 4;
  h.streak = CrashStreak{"rank 3: exitcode 1: ValueError", 2};
  h.streak_before = CrashStreak{"rank 3: exitcode 1: ValueError", 1};
  h.stop_reason = "a crash loop";
  h.causes = {"10.0.0.2_22_1", "10.0.0.2_22_1"};
  h.excluded = {Exclusion{"10.0.0.8_1_0", 2, 2, "worker group stalled"}};
  h.waiting = 40;
  h.waiting_ids = {"10.0.0.3_100_0", "10.0.0.4_100_0"};
  h.ended = RoundEnd{4, {"10.0.0.5_1_0"}, {"10.0.0.6_2_0", "10.0.0.7_3_0"}};
  h.segment = 2;
  h.standby = 1;
  return h;
}

NodeDesc rich_node() {
  NodeDesc n = test::node("10.0.0.1", 11);
  n.local_id = 2;
  n.nproc = 8;
  n.role = "trainer";
  n.is_endpoint_host = true;
  n.node_index = 3;
  n.topology = "s0.s4";
  n.domain = "0123abcd-0000-0000-0000-000000000001.5";
  n.last_round = 4;
  n.last_rank = 0;
  return n;
}

TEST(RdzvState, HeaderRoundTrip) {
  for (const RoundHeader& h : {rich_header(), RoundHeader{}, test::closing(2, 7, "x", 9)}) {
    auto decoded = decode_header(encode_header(h));
    ASSERT_TRUE(decoded) << decoded.error().message;
    EXPECT_EQ(*decoded, h);
  }
}

TEST(RdzvState, HeaderEncodingIsDeterministic) {
  EXPECT_EQ(encode_header(rich_header()), encode_header(rich_header()));
  EXPECT_NE(encode_header(rich_header()), encode_header(RoundHeader{}));
}

TEST(RdzvState, NodeRoundTrip) {
  for (const NodeDesc& n : {rich_node(), test::node("h")}) {
    auto decoded = decode_node(encode_node(n));
    ASSERT_TRUE(decoded) << decoded.error().message;
    EXPECT_EQ(*decoded, n);
  }
}

TEST(RdzvState, AssignmentRoundTrip) {
  Assignment member{true, "", 3, 8, 24, 64, 8, 32, "10.0.0.5_1_0", "two agents"};
  Assignment late;
  late.why = "late";
  for (const Assignment& a : {member, late}) {
    auto decoded = decode_assignment(encode_assignment(a));
    ASSERT_TRUE(decoded) << decoded.error().message;
    EXPECT_EQ(*decoded, a);
  }
}

TEST(RdzvState, MembersRoundTrip) {
  for (const auto& list :
       {std::vector<NodeDesc>{}, std::vector<NodeDesc>{rich_node(), test::node("b", 7)}}) {
    auto decoded = decode_members(encode_members(list));
    ASSERT_TRUE(decoded) << decoded.error().message;
    EXPECT_EQ(*decoded, list);
  }
}

void expect_one_line_protocol_error(const Error& e, const std::string& what,
                                    const std::string& input) {
  EXPECT_EQ(e.code, ErrorCode::protocol) << input;
  EXPECT_EQ(e.message.find('\n'), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("rendezvous " + what + " of " + std::to_string(input.size()) +
                           " bytes is not valid"),
            std::string::npos)
      << e.message;
}

TEST(RdzvState, HeaderRejectsGarbage) {
  std::string good = encode_header(RoundHeader{});
  std::string old_version = good;
  old_version.replace(old_version.find("\"version\":8"), 11, "\"version\":7");
  std::string bad_phase = good;
  bad_phase.replace(bad_phase.find("joining"), 7, "bogus");
  const std::string inputs[] = {
      "",          "not json", "Y2FuaW1hZGFt",  // torch's base64 "no state" sentinel
      "[]",        "{}",       R"({"version":8,"round":0})",
      old_version, bad_phase,  good.substr(0, good.size() - 1)};
  for (const auto& in : inputs) {
    auto r = decode_header(in);
    ASSERT_FALSE(r) << in;
    expect_one_line_protocol_error(r.error(), "state", in);
  }
  auto bad = decode_header(old_version);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("it has state version 7, this ddprun reads 8: another "
                                     "ddprun release wrote it"),
            std::string::npos)
      << bad.error().message;
}

TEST(RdzvState, RecordsRejectGarbage) {
  for (const std::string in : {"", "{}", "[1]", R"({"addr":"a"})"}) {
    auto n = decode_node(in);
    ASSERT_FALSE(n) << in;
    expect_one_line_protocol_error(n.error(), "node", in);
    auto a = decode_assignment(in);
    ASSERT_FALSE(a) << in;
    expect_one_line_protocol_error(a.error(), "assignment", in);
  }
  for (const std::string in : {"", "{", "[{}]", "[1]"}) {
    auto m = decode_members(in);
    ASSERT_FALSE(m) << in;
    expect_one_line_protocol_error(m.error(), "members list", in);
  }
}

TEST(RdzvState, NodeIdLooksLikeTorch) {
  EXPECT_EQ(test::node("localhost", 20064).id(), "localhost_20064_0");
  EXPECT_EQ(rich_node().id(), "10.0.0.1_11_2");
}

TEST(RdzvState, RankOrderIsEndpointHostThenNodeIndexThenAddrPidLocalId) {
  NodeDesc host = test::node("zz");
  host.is_endpoint_host = true;
  NodeDesc idx1 = test::node("yy");
  idx1.node_index = 1;
  NodeDesc idx0 = test::node("xx");
  idx0.node_index = 0;
  NodeDesc b = test::node("b");
  NodeDesc a2 = test::node("a", 2);
  NodeDesc a1 = test::node("a", 1);
  NodeDesc a1_local1 = test::node("a", 1);
  a1_local1.local_id = 1;
  std::vector<NodeDesc> nodes{b, idx1, a2, a1_local1, host, idx0, a1};
  std::sort(nodes.begin(), nodes.end(), rank_before);
  std::vector<std::string> ids;
  ids.reserve(nodes.size());
  for (const auto& n : nodes) {
    ids.push_back(n.id());
  }
  EXPECT_EQ(ids, (std::vector<std::string>{host.id(), idx0.id(), idx1.id(), a1.id(), a1_local1.id(),
                                           a2.id(), b.id()}));
  EXPECT_FALSE(rank_before(a1, a1));
}

TEST(RdzvState, KeysAreOurOwn) {
  EXPECT_EQ(state_key("job7"), "ddprun/rdzv/job7/state");
  EXPECT_EQ(host_marker_key("job7"), "ddprun/rdzv/job7/host");
  EXPECT_EQ(round_prefix("job7", 3), "ddprun/rdzv/job7/3/");
  EXPECT_EQ(slots_key("job7", 3), "ddprun/rdzv/job7/3/slots");
  EXPECT_EQ(slot_key("job7", 3, 12), "ddprun/rdzv/job7/3/slot/12");
  EXPECT_EQ(gone_key("job7", 3), "ddprun/rdzv/job7/3/gone");
  EXPECT_EQ(rank_key("job7", 3, 12), "ddprun/rdzv/job7/3/rank/12");
  EXPECT_EQ(members_key("job7", 3, 2), "ddprun/rdzv/job7/3/members/2");
  EXPECT_EQ(heartbeat_key("job7", "h_1_0"), "ddprun/rdzv/job7/hb/h_1_0");
  EXPECT_EQ(progress_key("job7", "h_1_0"), "ddprun/rdzv/job7/progress/h_1_0");
  EXPECT_EQ(stacks_request_key("job7", 3), "ddprun/rdzv/job7/3/stacks");
  EXPECT_EQ(stacks_answer_key("job7", 3, 2, 17), "ddprun/rdzv/job7/3/stacks/2/17");
}

TEST(RdzvState, PhaseNames) {
  EXPECT_EQ(to_string(Phase::joining), "joining");
  EXPECT_EQ(to_string(Phase::closing), "closing");
  EXPECT_EQ(to_string(Phase::complete), "complete");
}

TEST(RdzvState, ParseHeartbeat) {
  EXPECT_EQ(parse_heartbeat("1700000000123"), std::optional<WallMs>(1'700'000'000'123));
  EXPECT_EQ(parse_heartbeat("0"), std::optional<WallMs>(0));
  for (const std::string bad : {"", "abc", "12a", " 12", "12 ", "1.5", "99999999999999999999"}) {
    EXPECT_EQ(parse_heartbeat(bad), std::nullopt) << bad;
  }
}

TEST(RdzvState, ProgressValueIsWallMsOrADash) {
  EXPECT_EQ(render_progress_value(1'700'000'000'123), "1700000000123");
  EXPECT_EQ(render_progress_value(std::nullopt), "-");
  EXPECT_EQ(parse_progress_value("1700000000123"), std::optional<WallMs>(1'700'000'000'123));
  for (const std::string unknown : {"", "-", "x"}) {
    EXPECT_EQ(parse_progress_value(unknown), std::nullopt) << unknown;
  }
}

}  // namespace
}  // namespace ddprun::rdzv
