#include "ddprun/rdzv/decide.hpp"

#include <gtest/gtest.h>

#include "unit/rdzv/fixtures.hpp"

namespace ddprun::rdzv {
namespace {

using test::joining;
using test::node;
using test::running;
using test::settings;

constexpr WallMs k_now = 1'000'000;
constexpr WallMs k_join_deadline = k_now + 600'000;

const NodeDesc a = node("a");
const NodeDesc b = node("b");
const NodeDesc c = node("c");
const NodeDesc d = node("d");

struct JoinCase {
  const char* name;
  RdzvState state;
  NodeDesc self;
  WallMs now;
  int min_nodes;
  int max_nodes;
  Action expected;
};

RdzvState with_deadline(RdzvState s, WallMs deadline) {
  s.deadline = deadline;
  return s;
}

RdzvState closed(RdzvState s) {
  s.closed = true;
  return s;
}

RdzvState with_waiting(RdzvState s, const NodeDesc& n, WallMs beat) {
  s.wait_list[n.id()] = n;
  s.last_heartbeats[n.id()] = beat;
  return s;
}

RdzvState with_beat(RdzvState s, const NodeDesc& n, WallMs beat) {
  s.last_heartbeats[n.id()] = beat;
  return s;
}

TEST(RdzvDecideJoin, Table) {
  const WallMs late = k_join_deadline + 1;
  const WallMs too_late = k_join_deadline + 5'001;
  const JoinCase cases[] = {
      {"first join", RdzvState{}, a, k_now, 2, 4, Action::add_to_participants},
      {"second join", joining({a}, k_now), b, k_now, 2, 4, Action::add_to_participants},
      {"closed wins", closed(running({a}, k_now)), a, k_now, 1, 1, Action::error_closed},
      {"closed for newcomer", closed(RdzvState{}), b, k_now, 1, 1, Action::error_closed},
      {"complete and member", running({a, b}, k_now), a, k_now, 2, 2, Action::done},
      {"complete member past deadline", running({a, b}, k_now), a, late, 2, 2, Action::done},
      {"late joiner waits", running({a, b}, k_now), c, k_now, 1, 4, Action::add_to_wait_list},
      {"no room at max", running({a, b}, k_now), c, k_now, 1, 2, Action::wait},
      {"already waiting, fresh", with_waiting(running({a}, k_now), b, k_now), b, k_now + 10, 1, 2,
       Action::wait},
      {"already waiting, stale", with_waiting(running({a}, k_now), b, k_now), b, k_now + 5'000, 1,
       2, Action::keep_alive},
      {"below min waits", joining({a}, k_now), a, k_now + 10, 2, 4, Action::wait},
      {"stale own beat", joining({a}, k_now), a, k_now + 5'000, 2, 4, Action::keep_alive},
      {"last call running", with_deadline(joining({a, b}, k_now), k_now + 30'000), a, k_now + 10, 2,
       4, Action::wait},
      {"last call over", with_deadline(joining({a, b}, k_now), k_now + 30'000), a, k_now + 30'000,
       2, 4, Action::mark_complete},
      {"timeout rolls back participant", joining({a}, k_now), a, late, 2, 2,
       Action::remove_from_participants},
      {"timeout rolls back waiter", with_waiting(running({a}, k_now), b, k_now), b, late, 1, 2,
       Action::remove_from_wait_list},
      {"timeout when not in state", joining({a}, k_now), b, late, 3, 3, Action::error_timeout},
      {"timeout after grace", joining({a}, k_now), a, too_late, 2, 2, Action::error_timeout},
  };
  for (const auto& tc : cases) {
    auto s = settings(tc.min_nodes, tc.max_nodes);
    EXPECT_EQ(to_string(decide_join(tc.state, tc.self, tc.now, k_join_deadline, s)),
              to_string(tc.expected))
        << tc.name;
  }
}

TEST(RdzvApply, FirstJoinAddsParticipantWithHeartbeat) {
  auto s = apply(Action::add_to_participants, RdzvState{}, a, k_now, settings(2, 4));
  ASSERT_EQ(s.participants.count(a.id()), 1U);
  EXPECT_EQ(s.last_heartbeats.at(a.id()), k_now);
  EXPECT_FALSE(s.complete);
  EXPECT_FALSE(s.deadline.has_value());
}

TEST(RdzvApply, ReachingMinStartsLastCall) {
  auto s = apply(Action::add_to_participants, joining({a}, k_now), b, k_now, settings(2, 4));
  ASSERT_TRUE(s.deadline.has_value());
  EXPECT_EQ(*s.deadline, k_now + 30'000);
  EXPECT_FALSE(s.complete);
}

TEST(RdzvApply, ReachingMaxCompletesImmediately) {
  auto s = apply(Action::add_to_participants, joining({b, c}, k_now), a, k_now, settings(2, 3));
  EXPECT_TRUE(s.complete);
  EXPECT_FALSE(s.deadline.has_value());
  EXPECT_EQ(s.participants.at(a.id()).rank, 0);
  EXPECT_EQ(s.participants.at(b.id()).rank, 1);
  EXPECT_EQ(s.participants.at(c.id()).rank, 2);
}

TEST(RdzvApply, JoiningLeavesTheWaitList) {
  RdzvState s = with_waiting(RdzvState{}, b, k_now);
  s.round = 1;
  auto next = apply(Action::add_to_participants, s, b, k_now, settings(1, 4));
  EXPECT_TRUE(next.wait_list.empty());
  EXPECT_EQ(next.participants.count(b.id()), 1U);
}

TEST(RdzvApply, LateJoinerGoesOnWaitList) {
  auto s = apply(Action::add_to_wait_list, running({a}, k_now), b, k_now + 7, settings(1, 2));
  EXPECT_EQ(s.wait_list.count(b.id()), 1U);
  EXPECT_EQ(s.last_heartbeats.at(b.id()), k_now + 7);
  EXPECT_EQ(s.participants.size(), 1U);
}

TEST(RdzvApply, LastParticipantLeavingStartsNextRound) {
  auto s = with_waiting(running({a}, k_now, 4), b, k_now);
  auto next = apply(Action::remove_from_participants, s, a, k_now, settings(1, 2));
  EXPECT_EQ(next.round, 5);
  EXPECT_FALSE(next.complete);
  EXPECT_TRUE(next.participants.empty());
  EXPECT_EQ(next.last_heartbeats.count(a.id()), 0U);
  EXPECT_EQ(next.wait_list.count(b.id()), 1U);
}

TEST(RdzvApply, LeavingNonEmptyCompleteRoundKeepsRound) {
  auto next =
      apply(Action::remove_from_participants, running({a, b}, k_now, 2), a, k_now, settings(1, 2));
  EXPECT_EQ(next.round, 2);
  EXPECT_TRUE(next.complete);
}

TEST(RdzvApply, DroppingBelowMinClearsLastCall) {
  auto s = with_deadline(joining({a, b}, k_now), k_now + 30'000);
  auto next = apply(Action::remove_from_participants, s, b, k_now, settings(2, 4));
  EXPECT_FALSE(next.deadline.has_value());
  EXPECT_EQ(next.participants.size(), 1U);
}

TEST(RdzvApply, CloseAndReportFailure) {
  auto s = running({a, b}, k_now, 3);
  EXPECT_TRUE(apply(Action::mark_closed, s, a, k_now, settings(2, 2)).closed);
  auto failed = apply(Action::report_failure, s, b, k_now, settings(2, 2));
  ASSERT_TRUE(failed.failed_round.has_value());
  EXPECT_EQ(failed.failed_round->round, 3);
  EXPECT_EQ(failed.failed_round->reporter, b.id());
}

TEST(RdzvApply, WaitChangesNothing) {
  auto s = running({a, b}, k_now);
  for (Action act : {Action::wait, Action::done, Action::error_closed, Action::error_timeout}) {
    EXPECT_EQ(apply(act, s, a, k_now, settings(2, 2)), s) << to_string(act);
  }
}

TEST(RdzvRanks, EndpointHostFirstThenNodeIndexThenAddr) {
  NodeDesc host = node("zz");
  host.is_endpoint_host = true;
  NodeDesc idx1 = node("yy");
  idx1.node_index = 1;
  NodeDesc idx0 = node("xx");
  idx0.node_index = 0;
  NodeDesc plain_b = node("b");
  NodeDesc plain_a_pid2 = node("a", 2);
  NodeDesc plain_a_pid1 = node("a", 1);
  auto s = joining({plain_b, idx1, plain_a_pid2, host, idx0, plain_a_pid1}, k_now);
  auto done = apply(Action::mark_complete, s, host, k_now, settings(1, 8));
  auto order = ordered_participants(done);
  std::vector<std::string> ids;
  for (const auto& n : order) {
    ids.push_back(n.id());
  }
  EXPECT_EQ(ids, (std::vector<std::string>{host.id(), idx0.id(), idx1.id(), plain_a_pid1.id(),
                                           plain_a_pid2.id(), plain_b.id()}));
  EXPECT_EQ(done.participants.at(host.id()).rank, 0);
  EXPECT_EQ(done.participants.at(plain_b.id()).rank, 5);
}

TEST(RdzvDecideExit, Table) {
  auto s = running({a, b}, k_now);
  EXPECT_EQ(decide_exit(s, a, k_now, k_join_deadline), Action::remove_from_participants);
  EXPECT_EQ(decide_exit(s, c, k_now, k_join_deadline), Action::done);
  EXPECT_EQ(decide_exit(s, a, k_join_deadline + 1, k_join_deadline), Action::error_timeout);
}

TEST(RdzvDecideLeave, Table) {
  auto s = with_waiting(running({a, b}, k_now), c, k_now);
  EXPECT_EQ(decide_leave(s, a, k_now, k_now + 1), Action::leave);
  EXPECT_EQ(decide_leave(s, c, k_now, k_now + 1), Action::leave) << "waiting nodes leave too";
  EXPECT_EQ(decide_leave(s, d, k_now, k_now + 1), Action::done);
  EXPECT_EQ(decide_leave(s, a, k_now + 2, k_now + 1), Action::error_timeout);
  EXPECT_EQ(decide_leave(s, d, k_now + 2, k_now + 1), Action::done);
}

TEST(RdzvApply, LeavingARunningRoundIsRecordedForTheSurvivors) {
  auto s = apply(Action::leave, running({a, b, c}, k_now, 4), c, k_now, settings(2, 3));
  EXPECT_EQ(s.participants.count(c.id()), 0U);
  EXPECT_EQ(s.last_heartbeats.count(c.id()), 0U);
  EXPECT_EQ(s.left, (std::set<std::string>{c.id()}));
  EXPECT_EQ(s.round, 4);
  EXPECT_EQ(decide_while_running(s, a, 4, {a, b, c}, settings(2, 3)),
            RunSignal::membership_changed);
}

TEST(RdzvApply, LeavingTheWaitListOrAJoiningRoundIsNotRecorded) {
  auto waiting = apply(Action::leave, with_waiting(running({a, b}, k_now), c, k_now), c, k_now,
                       settings(1, 3));
  EXPECT_EQ(waiting.wait_list.count(c.id()), 0U);
  EXPECT_EQ(waiting.last_heartbeats.count(c.id()), 0U);
  EXPECT_TRUE(waiting.left.empty());
  auto joining_round = apply(Action::leave, with_deadline(joining({a, b}, k_now), k_now + 1'000), b,
                             k_now, settings(2, 3));
  EXPECT_EQ(joining_round.participants.count(b.id()), 0U);
  EXPECT_TRUE(joining_round.left.empty());
  EXPECT_FALSE(joining_round.deadline.has_value()) << "below min: the last call stops";
}

TEST(RdzvApply, RoundEndClearsWhoLeft) {
  auto s = apply(Action::leave, running({a, b}, k_now, 2), b, k_now, settings(1, 2));
  ASSERT_EQ(s.left.size(), 1U);
  auto next = apply(Action::remove_from_participants, s, a, k_now, settings(1, 2));
  EXPECT_EQ(next.round, 3);
  EXPECT_TRUE(next.left.empty());
  auto all_left = apply(Action::leave, running({a}, k_now, 2), a, k_now, settings(1, 2));
  EXPECT_EQ(all_left.round, 3);
  EXPECT_TRUE(all_left.left.empty());
}

TEST(RdzvDecideStoreUnreachable, LostOnlyAfterFailingForTheKeepAliveBound) {
  // keep-alive 5 s x 3: lost once the store has failed for 15 s.
  EXPECT_EQ(decide_store_unreachable(std::nullopt, k_now, settings(1, 2)), RunSignal::none);
  EXPECT_EQ(decide_store_unreachable(k_now - 14'999, k_now, settings(1, 2)), RunSignal::none);
  EXPECT_EQ(decide_store_unreachable(k_now - 15'000, k_now, settings(1, 2)), RunSignal::store_lost);
}

TEST(RdzvDecideClose, Table) {
  EXPECT_EQ(decide_close(RdzvState{}, k_now, k_now + 1), Action::mark_closed);
  EXPECT_EQ(decide_close(closed(RdzvState{}), k_now, k_now + 1), Action::done);
  EXPECT_EQ(decide_close(RdzvState{}, k_now + 2, k_now + 1), Action::error_timeout);
}

TEST(RdzvDecideReportFailure, Table) {
  auto s = running({a, b}, k_now, 2);
  EXPECT_EQ(decide_report_failure(s, 2, k_now, k_now + 1), Action::report_failure);
  EXPECT_EQ(decide_report_failure(s, 1, k_now, k_now + 1), Action::done);
  EXPECT_EQ(decide_report_failure(closed(s), 2, k_now, k_now + 1), Action::done);
  auto reported = apply(Action::report_failure, s, a, k_now, settings(2, 2));
  EXPECT_EQ(decide_report_failure(reported, 2, k_now, k_now + 1), Action::done);
  auto older = apply(Action::report_failure, running({a, b}, k_now, 1), a, k_now, settings(2, 2));
  older.round = 2;
  EXPECT_EQ(decide_report_failure(older, 2, k_now, k_now + 1), Action::report_failure);
  EXPECT_EQ(decide_report_failure(s, 2, k_now + 2, k_now + 1), Action::error_timeout);
}

TEST(RdzvSanitize, DropsDeadParticipantAndWaiter) {
  // keep-alive 5 s x 3: dead when the beat is older than 15 s.
  auto s = with_waiting(running({a, b, c}, k_now), d, k_now - 15'001);
  s = with_beat(s, b, k_now - 15'001);
  s = with_beat(s, c, k_now - 15'000);
  auto out = sanitize(s, k_now, settings(2, 4));
  ASSERT_EQ(out.dropped.size(), 2U);
  EXPECT_EQ(out.state.participants.count(b.id()), 0U);
  EXPECT_EQ(out.state.participants.count(c.id()), 1U);
  EXPECT_EQ(out.state.wait_list.count(d.id()), 0U);
  EXPECT_EQ(out.state.last_heartbeats.count(b.id()), 0U);
  EXPECT_TRUE(out.state.complete);
}

TEST(RdzvSanitize, AllParticipantsDeadStartsNextRound) {
  auto s = running({a, b}, k_now - 20'000, 7);
  auto out = sanitize(s, k_now, settings(1, 2));
  EXPECT_EQ(out.state.round, 8);
  EXPECT_FALSE(out.state.complete);
  EXPECT_EQ(out.dropped.size(), 2U);
}

TEST(RdzvSanitize, DeadJoinerBelowMinClearsLastCall) {
  auto s = with_deadline(joining({a, b}, k_now), k_now + 30'000);
  s = with_beat(s, b, k_now - 16'000);
  auto out = sanitize(s, k_now, settings(2, 4));
  EXPECT_FALSE(out.state.deadline.has_value());
}

TEST(RdzvSanitize, FreshStateUnchanged) {
  auto s = running({a, b}, k_now - 1'000);
  auto out = sanitize(s, k_now, settings(2, 2));
  EXPECT_TRUE(out.dropped.empty());
  EXPECT_EQ(out.state, s);
}

struct RunCase {
  const char* name;
  RdzvState state;
  NodeDesc self;
  int round;
  int max_nodes;
  RunSignal expected;
};

RdzvState failed_by(RdzvState s, int round, const NodeDesc& n) {
  s.failed_round = FailedRound{round, n.id()};
  return s;
}

TEST(RdzvDecideWhileRunning, Table) {
  const auto ab = running({a, b}, k_now, 3);
  const RunCase cases[] = {
      {"steady", ab, a, 3, 4, RunSignal::none},
      {"closed", closed(ab), a, 3, 4, RunSignal::closed},
      {"peer failed", failed_by(ab, 3, b), a, 3, 4, RunSignal::peer_failed},
      {"own failure report", failed_by(ab, 3, a), a, 3, 4, RunSignal::none},
      {"old failure report", failed_by(ab, 2, b), a, 3, 4, RunSignal::none},
      {"node waiting with room", with_waiting(ab, c, k_now), a, 3, 4,
       RunSignal::membership_changed},
      {"node waiting without room", with_waiting(ab, c, k_now), a, 3, 2, RunSignal::none},
      {"member gone", running({a}, k_now, 3), a, 3, 4, RunSignal::membership_changed},
      {"round moved on", running({a, b}, k_now, 4), a, 3, 4, RunSignal::membership_changed},
  };
  for (const auto& tc : cases) {
    EXPECT_EQ(to_string(decide_while_running(tc.state, tc.self, tc.round, {a, b},
                                             settings(1, tc.max_nodes))),
              to_string(tc.expected))
        << tc.name;
  }
}

TEST(RdzvMessages, ProgressNamesNodesAndTimeLeft) {
  auto s =
      with_deadline(joining({node("node1"), node("node2"), node("node3")}, k_now), k_now + 29'500);
  EXPECT_EQ(render_progress(s, node("node1"), k_now, k_join_deadline, settings(3, 4)),
            "rendezvous job round 0: 3/4 nodes (node1, node2, node3), waiting up to 30s for more");
}

TEST(RdzvMessages, ProgressFallsBackToIdsForSharedAddresses) {
  auto s = joining({node("h", 1), node("h", 2)}, k_now);
  EXPECT_EQ(render_progress(s, node("h", 1), k_now, k_now + 600'000, settings(3, 3)),
            "rendezvous job round 0: 2/3 nodes (h_1_0, h_2_0), waiting up to 600s for more");
}

TEST(RdzvMessages, TimeoutNamesExpectedArrivedAndLost) {
  auto s = joining({node("node2")}, k_now);
  s.round = 2;
  auto msg = render_timeout(s, settings(3, 3), {node("node1"), node("node2")},
                            {node("node1"), node("node2"), node("node3")});
  EXPECT_EQ(msg,
            "rendezvous job round 2 timed out after 600s (join_timeout): expected 3 nodes, "
            "2 arrived (node1, node2); lost since the previous round: node3");
}

TEST(RdzvMessages, TimeoutWithRangeAndFractionalSeconds) {
  auto st = settings(2, 4);
  st.join_timeout = std::chrono::milliseconds(1'250);
  auto msg = render_timeout(RdzvState{}, st, {node("n1")}, {});
  EXPECT_EQ(msg,
            "rendezvous job round 0 timed out after 1.25s (join_timeout): expected 2 to 4 "
            "nodes, 1 arrived (n1)");
}

TEST(RdzvMessages, SignalTellsLeftFromLost) {
  auto s = apply(Action::leave, running({a, b, c}, k_now, 3), c, k_now, settings(1, 4));
  s.participants.erase(b.id());  // b was dropped as dead
  EXPECT_EQ(render_signal(RunSignal::membership_changed, s, a, 3, {a, b, c}, settings(1, 4)),
            "rendezvous job round 3: membership changed (c left; lost b); the group re-forms");
}

TEST(RdzvMessages, SignalSaysWhenThisNodeWasDropped) {
  auto s = running({a, b}, k_now, 4);
  EXPECT_EQ(render_signal(RunSignal::membership_changed, s, c, 3, {a, b, c}, settings(1, 4)),
            "rendezvous job round 3: this node (c) was dropped from the round: no keep-alive of "
            "it reached the store for 15s (was the agent stopped or cut off?); it joins the next "
            "round");
}

TEST(RdzvMessages, StoreLostNamesTheSilenceTheBoundAndTheError) {
  EXPECT_EQ(render_store_lost(settings(1, 2), k_now - 16'250, k_now,
                              "store: check on 10.0.0.1:29400: Connection refused"),
            "rendezvous job: lost the rendezvous store: no answer for 16.25s (the keep-alive "
            "bound is 15s), so no round can form again; last error: store: check on "
            "10.0.0.1:29400: Connection refused");
}

TEST(RdzvMessages, SignalNamesLostAndWaitingNodes) {
  auto s = with_waiting(running({a}, k_now, 3), d, k_now);
  EXPECT_EQ(render_signal(RunSignal::membership_changed, s, a, 3, {a, b}, settings(1, 4)),
            "rendezvous job round 3: membership changed (lost b; waiting to join d); the group "
            "re-forms");
  EXPECT_EQ(render_signal(RunSignal::peer_failed, failed_by(s, 3, b), a, 3, {a, b}, settings(1, 4)),
            "rendezvous job round 3: node b_100_0 reported a failed worker group; restarting "
            "together");
}

TEST(RdzvMessages, LongNodeListsAreCutShort) {
  std::vector<NodeDesc> many;
  for (int i = 0; i < 40; ++i) {
    many.push_back(node("n" + std::to_string(i)));
  }
  auto names = render_node_names(many);
  EXPECT_EQ(names.rfind("n0, n1, ", 0), 0U) << names;
  EXPECT_NE(names.find(", n31, ... and 8 more"), std::string::npos) << names;
  EXPECT_EQ(names.find("n32"), std::string::npos) << names;
}

TEST(RdzvBackoff, WindowDoublesFromTwoMillisecondsUpToTheCap) {
  using std::chrono::milliseconds;
  EXPECT_EQ(contention_backoff(0, milliseconds(150), 0.99), milliseconds(0));
  EXPECT_EQ(contention_backoff(1, milliseconds(150), 0.5), milliseconds(1));
  EXPECT_EQ(contention_backoff(3, milliseconds(150), 0.5), milliseconds(4));
  EXPECT_EQ(contention_backoff(7, milliseconds(150), 0.5), milliseconds(64));
  EXPECT_EQ(contention_backoff(8, milliseconds(150), 0.5), milliseconds(75));
  EXPECT_EQ(contention_backoff(1000, milliseconds(150), 0.5), milliseconds(75));
  EXPECT_EQ(contention_backoff(5, milliseconds(150), 0.0), milliseconds(0));
  EXPECT_EQ(contention_backoff(5, milliseconds(0), 0.5), milliseconds(0));
  EXPECT_LE(contention_backoff(1000, milliseconds(150), 1.5), milliseconds(150));
}

}  // namespace
}  // namespace ddprun::rdzv
