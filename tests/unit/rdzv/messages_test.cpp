// Log lines and error messages of the rendezvous.

#include "ddprun/rdzv/decide.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "unit/rdzv/fixtures.hpp"

namespace ddprun::rdzv {
namespace {

using test::complete;
using test::joining;
using test::node;
using test::settings;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr WallMs k_now = 1'000'000;
constexpr WallMs k_join_deadline = k_now + 600'000;

const NodeDesc a = node("a");
const NodeDesc b = node("b");
const NodeDesc c = node("c");
const NodeDesc d = node("d");

std::vector<NodeDesc> numbered(const std::string& prefix, int n) {
  std::vector<NodeDesc> out;
  out.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    out.push_back(node(prefix + std::to_string(i)));
  }
  return out;
}

std::vector<std::string> ids_of(const std::vector<NodeDesc>& nodes) {
  std::vector<std::string> out;
  out.reserve(nodes.size());
  for (const auto& n : nodes) {
    out.push_back(n.id());
  }
  return out;
}

NodeDesc ranked(const std::string& addr, int node_rank) {
  NodeDesc n = node(addr);
  n.node_index = node_rank;
  return n;
}

RdzvSettings static_settings(int nodes) {
  RdzvSettings s = settings(nodes, nodes);
  s.unique_node_index = true;
  s.join_timeout = std::chrono::seconds(900);
  s.incomplete_hint = "Pass --node_rank K.\nOr not.";
  return s;
}

TEST(RdzvIncomplete, MissingNodeIndicesAreThoseNoArrivalHolds) {
  EXPECT_EQ(missing_node_indices(4, {ranked("a", 2), ranked("b", 0)}), (std::vector<int>{1, 3}));
  EXPECT_EQ(missing_node_indices(2, {ranked("a", 0), ranked("b", 1)}), std::vector<int>{});
  EXPECT_EQ(missing_node_indices(2, {node("a")}), (std::vector<int>{0, 1}));
  EXPECT_EQ(missing_node_indices(2, {ranked("a", 0), ranked("b", 0)}), std::vector<int>{1});
}

TEST(RdzvIncomplete, FirstWarningAfterTheDelayThenOncePerInterval) {
  const auto s = static_settings(2);  // after 10 s, then every 60 s
  EXPECT_FALSE(is_incomplete_warning_due(k_now, std::nullopt, k_now + 9'999, s));
  EXPECT_TRUE(is_incomplete_warning_due(k_now, std::nullopt, k_now + 10'000, s));
  EXPECT_FALSE(is_incomplete_warning_due(k_now, k_now + 10'000, k_now + 69'999, s));
  EXPECT_TRUE(is_incomplete_warning_due(k_now, k_now + 10'000, k_now + 70'000, s));
}

TEST(RdzvIncomplete, ShortJoinTimeoutWarnsAtItsHalf) {
  auto s = static_settings(2);
  s.join_timeout = std::chrono::seconds(8);
  EXPECT_FALSE(is_incomplete_warning_due(k_now, std::nullopt, k_now + 3'999, s));
  EXPECT_TRUE(is_incomplete_warning_due(k_now, std::nullopt, k_now + 4'000, s));
}

TEST(RdzvIncomplete, StaticLineNamesArrivedAndMissingRanksThenTheHintOnIndentedLines) {
  const auto s = static_settings(3);
  const auto msg = render_incomplete(joining(), 1, {ranked("10.0.0.1", 0)}, k_now, k_now + 10'000,
                                     k_now + 900'000, s, true);
  EXPECT_EQ(msg,
            "rendezvous job round 0 is incomplete after 10s: 1/3 nodes arrived (10.0.0.1); "
            "missing --node_rank 1, 2; waiting up to 890s more\n  Pass --node_rank K.\n  Or not.");
  EXPECT_THAT(render_incomplete(joining(), 1, {ranked("10.0.0.1", 0)}, k_now, k_now + 70'000,
                                k_now + 900'000, s, false),
              Not(HasSubstr("Pass")));
}

TEST(RdzvIncomplete, ElasticLineCountsTheNodesStillNeeded) {
  const auto msg = render_incomplete(joining(), 1, {a}, k_now, k_now + 10'000, k_now + 600'000,
                                     settings(3, 4), false);
  EXPECT_EQ(msg,
            "rendezvous job round 0 is incomplete after 10s: 1/3 to 4 nodes arrived (a); "
            "missing at least 2 nodes; waiting up to 590s more");
}

TEST(RdzvIncomplete, UnansweredStoreNamesTheEndpointAndTheHintOnce) {
  const auto s = static_settings(2);
  EXPECT_EQ(render_store_unanswered(s, "127.0.0.1:29500", 10'400, 889'600, true),
            "rendezvous job: no rendezvous store answers at 127.0.0.1:29500 after 10s; waiting "
            "up to 890s more\n  Pass --node_rank K.\n  Or not.");
  EXPECT_THAT(render_store_unanswered(s, "127.0.0.1:29500", 70'000, 830'000, false),
              Not(HasSubstr("Pass")));
}

TEST(RdzvMessages, ProgressNamesNodesAndTimeLeft) {
  EXPECT_EQ(
      render_progress(joining(0, k_now + 29'500), 3, {node("node1"), node("node2"), node("node3")},
                      k_now, k_join_deadline, settings(3, 4)),
      "rendezvous job round 0: 3/4 nodes (node1, node2, node3), waiting up to 30s for more");
}

TEST(RdzvMessages, ProgressFallsBackToIdsForSharedAddresses) {
  EXPECT_EQ(render_progress(joining(), 2, {node("h", 1), node("h", 2)}, k_now, k_join_deadline,
                            settings(3, 3)),
            "rendezvous job round 0: 2/3 nodes (h_1_0, h_2_0), waiting up to 600s for more");
}

TEST(RdzvMessages, ProgressOfALargeRoundNamesTheFirst32) {
  const auto msg =
      render_progress(joining(1), 40, numbered("n", 32), k_now, k_now + 1'000, settings(64, 64));
  EXPECT_THAT(msg, HasSubstr("round 1: 40/64 nodes (n0, n1, "));
  EXPECT_THAT(msg, HasSubstr(", n31, ... and 8 more), waiting up to 1s for more"));
  EXPECT_EQ(render_progress(joining(), 5, {}, k_now, k_join_deadline, settings(8, 8)),
            "rendezvous job round 0: 5/8 nodes (5 nodes), waiting up to 600s for more");
}

TEST(RdzvMessages, ProgressWhileARoundRunsWithoutThisNode) {
  RoundHeader h = complete(2, 3);
  h.waiting = 1;
  EXPECT_EQ(render_progress(h, 3, {}, k_now, k_join_deadline, settings(1, 4)),
            "rendezvous job round 2 is running with 3 nodes; 1 waiting for the next round, "
            "waiting up to 600s");
}

TEST(RdzvMessages, TimeoutNamesExpectedArrivedAndLost) {
  auto msg = render_timeout(joining(2), settings(3, 3), 2, {node("node1"), node("node2")},
                            {node("node1"), node("node2"), node("node3")});
  EXPECT_EQ(msg,
            "rendezvous job round 2 timed out after 600s (join_timeout): expected 3 nodes, "
            "2 arrived (node1, node2); lost since the previous round: node3");
}

TEST(RdzvMessages, TimeoutWithRangeAndFractionalSeconds) {
  auto st = settings(2, 4);
  st.join_timeout = std::chrono::milliseconds(1'250);
  EXPECT_EQ(render_timeout(joining(), st, 1, {node("n1")}, {}),
            "rendezvous job round 0 timed out after 1.25s (join_timeout): expected 2 to 4 "
            "nodes, 1 arrived (n1)");
}

TEST(RdzvMessages, TimeoutNamesLostNodesOnlyWhenEveryArrivalIsKnown) {
  auto previous = numbered("n", 32);
  previous.push_back(node("gone"));
  const auto msg = render_timeout(joining(1), settings(64, 64), 40, numbered("n", 32), previous);
  EXPECT_THAT(msg, HasSubstr("expected 64 nodes, 40 arrived (n0, n1, "));
  EXPECT_THAT(msg, HasSubstr(", n31, ... and 8 more)"));
  EXPECT_THAT(msg, Not(HasSubstr("lost"))) << "gone may be among the 8 not named";
  EXPECT_THAT(render_timeout(joining(1), settings(3, 3), 3, {a, b}, {a, b, c}),
              Not(HasSubstr("lost")));
  EXPECT_THAT(render_timeout(joining(1), settings(3, 3), 2, {a, b}, {a, b, c}),
              HasSubstr("; lost since the previous round: c"));
}

RoundHeader ended(int round, std::vector<std::string> left, std::vector<std::string> lost) {
  RoundHeader h = joining(round + 1);
  h.ended = RoundEnd{round, std::move(left), std::move(lost)};
  return h;
}

std::string changed(const RoundHeader& h, const NodeDesc& self = a, int round = 3) {
  return render_signal(RunSignal::membership_changed, h, self, round, settings(1, 4));
}

TEST(RdzvMessages, SignalTellsLeftFromLost) {
  EXPECT_EQ(changed(ended(3, {c.id()}, {b.id()})),
            "rendezvous job round 3: membership changed (c left; lost b); the group re-forms");
  EXPECT_EQ(changed(ended(3, {}, {b.id(), d.id()})),
            "rendezvous job round 3: membership changed (lost b, d); the group re-forms");
  EXPECT_EQ(changed(ended(3, {node("h", 1).id(), node("h", 2).id()}, {})),
            "rendezvous job round 3: membership changed (h_1_0, h_2_0 left); the group re-forms");
}

TEST(RdzvMessages, SignalNamesWaitingNodes) {
  RoundHeader h = complete(3, 2);
  h.waiting = 1;
  h.waiting_ids = {d.id()};
  EXPECT_EQ(changed(h),
            "rendezvous job round 3: membership changed (waiting to join d); the group re-forms");
  h.waiting = 40;
  h.waiting_ids = ids_of(numbered("w", 32));
  const auto msg = changed(h);
  EXPECT_THAT(msg, HasSubstr("(waiting to join w0, w1, "));
  EXPECT_THAT(msg, HasSubstr(", w31, ... and 8 more); the group re-forms"));
}

TEST(RdzvMessages, SignalWithoutKnownCauseSaysTheRoundEnded) {
  EXPECT_EQ(changed(joining(4)),
            "rendezvous job round 3: membership changed (round 3 ended); the group re-forms");
  EXPECT_EQ(changed(ended(2, {c.id()}, {})),
            "rendezvous job round 3: membership changed (round 3 ended); the group re-forms")
      << "who ended an older round is no news";
}

TEST(RdzvMessages, SignalSaysWhenThisNodeWasDropped) {
  EXPECT_EQ(changed(ended(3, {}, {c.id()}), c),
            "rendezvous job round 3: this node (c) was dropped from the round: no keep-alive of "
            "it reached the store for 15s (was the agent stopped or cut off?); it joins the next "
            "round");
  EXPECT_THAT(changed(ended(3, {}, {c.id()}), a), HasSubstr("(lost c)"));
}

TEST(RdzvMessages, OtherSignals) {
  RoundHeader h = complete(3, 2);
  h.failed_round = FailedRound{3, b.id(), 0, ""};
  const auto s = settings(1, 4);
  EXPECT_EQ(render_signal(RunSignal::peer_failed, h, a, 3, s),
            "rendezvous job round 3: node b_100_0 reported a failed worker group; restarting "
            "together");
  h.failed_round->reason = "rank 5 failed (exitcode: -11, SIGSEGV)";
  EXPECT_EQ(render_signal(RunSignal::peer_failed, h, a, 3, s),
            "rendezvous job round 3: node b_100_0 reported a failed worker group (rank 5 failed "
            "(exitcode: -11, SIGSEGV)); restarting together");
  EXPECT_EQ(render_signal(RunSignal::closed, h, a, 3, s),
            "rendezvous job round 3: the rendezvous was closed");
  EXPECT_EQ(render_signal(RunSignal::store_lost, h, a, 3, s),
            "rendezvous job round 3: the rendezvous store is unreachable");
  EXPECT_EQ(render_signal(RunSignal::none, h, a, 3, s), "rendezvous job round 3: no change");
}

TEST(RdzvMessages, StoreLostNamesTheSilenceTheBoundAndTheError) {
  EXPECT_EQ(render_store_lost(settings(1, 2), k_now - 16'250, k_now,
                              "store: check on 10.0.0.1:29400: Connection refused"),
            "rendezvous job: lost the rendezvous store: no answer for 16.25s (the keep-alive "
            "bound is 15s), so no round can form again; last error: store: check on "
            "10.0.0.1:29400: Connection refused");
}

TEST(RdzvMessages, ClosedSaysTheJobFinished) {
  EXPECT_EQ(render_closed(settings(1, 2)),
            "rendezvous job is closed: the job already finished (or was shut down); start a new "
            "run with a different --rdzv-id");
}

TEST(RdzvMessages, LongNodeListsAreCutShort) {
  auto names = render_node_names(numbered("n", 40));
  EXPECT_EQ(names.rfind("n0, n1, ", 0), 0U) << names;
  EXPECT_NE(names.find(", n31, ... and 8 more"), std::string::npos) << names;
  EXPECT_EQ(names.find("n32"), std::string::npos) << names;
  EXPECT_EQ(render_node_names({node("h", 1), node("h", 2)}), "h_1_0, h_2_0");
}

TEST(RdzvMessages, IdsAreCutAt32AndShownByAddressWhenDistinct) {
  const auto forty = ids_of(numbered("n", 40));
  const auto cut = render_ids(forty, 40);
  EXPECT_EQ(cut.rfind("n0, n1, ", 0), 0U) << cut;
  EXPECT_NE(cut.find(", n31, ... and 8 more"), std::string::npos) << cut;
  EXPECT_EQ(cut.find("n32"), std::string::npos) << cut;
  EXPECT_EQ(render_ids({a.id(), b.id()}, 100), "a, b, ... and 98 more");
  EXPECT_EQ(render_ids({a.id(), b.id()}, 2), "a, b");
  EXPECT_EQ(render_ids({}, 5), "5 nodes");
  EXPECT_EQ(render_ids({}, 0), "");
  EXPECT_EQ(render_ids({node("h", 1).id(), node("h", 2).id()}, 2), "h_1_0, h_2_0");
  EXPECT_EQ(render_ids({node("my_host", 1).id()}, 1), "my_host");
}

}  // namespace
}  // namespace ddprun::rdzv
