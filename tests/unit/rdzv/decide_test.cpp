#include "ddprun/rdzv/decide.hpp"

#include <gtest/gtest.h>

#include "unit/rdzv/fixtures.hpp"

namespace ddprun::rdzv {
namespace {

using test::closing;
using test::complete;
using test::joining;
using test::node;
using test::settings;

constexpr WallMs k_now = 1'000'000;
constexpr WallMs k_join_deadline = k_now + 600'000;
constexpr WallMs k_block = 5'000;   // join_block
constexpr WallMs k_poll = 150;      // poll_interval
constexpr WallMs k_stale = 15'000;  // keep-alive 5 s x 3

const NodeDesc a = node("a");
const NodeDesc b = node("b");
const NodeDesc c = node("c");
const NodeDesc d = node("d");

/// slot 0: none; until -1: not checked.
struct JoinCase {
  const char* name;
  RoundHeader header;
  int slot;
  int slot_round;
  int min_nodes;
  int max_nodes;
  JoinStep expected;
  WallMs until = -1;
  WallMs now = k_now;
  int waiting_round = -1;
  std::optional<int> ran_round = std::nullopt;
};

RoundHeader closed(RoundHeader h) {
  h.closed = true;
  return h;
}

void check(const JoinCase& tc) {
  JoinView v;
  v.slot = tc.slot;
  v.slot_round = tc.slot_round;
  v.waiting_round = tc.waiting_round;
  v.ran_round = tc.ran_round;
  v.now = tc.now;
  v.join_deadline = k_join_deadline;
  const auto got = decide_join(tc.header, v, settings(tc.min_nodes, tc.max_nodes));
  EXPECT_EQ(to_string(got.step), to_string(tc.expected)) << tc.name;
  if (tc.until >= 0) {
    EXPECT_EQ(got.until, tc.until) << tc.name;
  }
}

TEST(RdzvDecideJoin, EndsAndErrors) {
  const JoinCase cases[] = {
      {"closed", closed(joining()), 0, -1, 1, 2, JoinStep::error_closed},
      {"closed with a slot", closed(joining()), 1, 0, 1, 2, JoinStep::error_closed},
      {"closed wins over timeout", closed(joining()), 0, -1, 1, 2, JoinStep::error_closed, -1,
       k_join_deadline + 1},
      {"join timeout", joining(), 1, 0, 2, 2, JoinStep::error_timeout, -1, k_join_deadline + 1},
      {"timeout while complete", complete(0, 2), 1, 0, 2, 2, JoinStep::error_timeout, -1,
       k_join_deadline + 1},
      {"at the join deadline still joins", joining(), 0, -1, 2, 2, JoinStep::take_slot, -1,
       k_join_deadline},
      {"ran the complete round: end it", complete(3, 2), 0, -1, 1, 2, JoinStep::end_previous, -1,
       k_now, -1, 3},
      {"ran an older round", complete(3, 1), 0, -1, 1, 2, JoinStep::join_wait_list, -1, k_now, -1,
       2},
      {"ran this round, now joining", joining(3), 0, -1, 1, 2, JoinStep::take_slot, -1, k_now, -1,
       3},
  };
  for (const auto& tc : cases) {
    check(tc);
  }
}

TEST(RdzvDecideJoin, Joining) {
  const WallMs soon = k_now + 1'000;
  const JoinCase cases[] = {
      {"no slot", joining(), 0, -1, 2, 4, JoinStep::take_slot},
      {"slot of an older round", joining(2), 3, 1, 2, 4, JoinStep::take_slot},
      {"below min waits on its rank key", joining(), 1, 0, 2, 4, JoinStep::await_assignment,
       k_now + k_block},
      {"reaching min starts the last call", joining(), 2, 0, 2, 4, JoinStep::set_deadline},
      {"beyond min, no deadline yet", joining(), 3, 0, 2, 4, JoinStep::set_deadline},
      {"min but checked already", joining(0, std::nullopt, 2), 2, 0, 2, 4,
       JoinStep::await_assignment, k_now + k_block},
      {"slot 3 wakes at the deadline", joining(0, soon), 3, 0, 2, 8, JoinStep::await_assignment,
       soon},
      {"slot 1 wakes at the deadline", joining(0, soon), 1, 0, 2, 8, JoinStep::await_assignment,
       soon},
      {"slot 5 wakes only after join_block", joining(0, soon), 5, 0, 2, 8,
       JoinStep::await_assignment, k_now + k_block},
      {"the slot that set the deadline wakes at it", joining(0, soon), 5, 0, 5, 12,
       JoinStep::await_assignment, soon},
      {"so do the two after it", joining(0, soon), 7, 0, 5, 12, JoinStep::await_assignment, soon},
      {"slot 4 below min 5 waits for join_block", joining(0, soon), 4, 0, 5, 12,
       JoinStep::await_assignment, k_now + k_block},
      {"slot 8 past min 5 waits for join_block", joining(0, soon), 8, 0, 5, 12,
       JoinStep::await_assignment, k_now + k_block},
      {"a far deadline: join_block first", joining(0, k_now + 20'000), 2, 0, 2, 8,
       JoinStep::await_assignment, k_now + k_block},
      {"the join deadline bounds the wait", joining(), 1, 0, 2, 4, JoinStep::await_assignment,
       k_join_deadline + 1, k_join_deadline - 100},
      {"reaching max claims", joining(), 4, 0, 2, 4, JoinStep::claim},
      {"reaching max claims before a last call", joining(0, soon), 4, 0, 2, 4, JoinStep::claim},
      {"min == max claims at once", joining(), 3, 0, 3, 3, JoinStep::claim},
      {"max but already checked", joining(0, std::nullopt, 4), 4, 0, 2, 4,
       JoinStep::await_assignment, k_now + k_block},
      {"beyond what was checked claims", joining(0, std::nullopt, 4), 5, 0, 2, 4, JoinStep::claim},
      {"at the deadline any slot claims", joining(0, k_now), 7, 0, 2, 8, JoinStep::claim},
      {"after the deadline a checked slot claims", joining(0, k_now - 1, 3), 2, 0, 2, 8,
       JoinStep::claim},
  };
  for (const auto& tc : cases) {
    check(tc);
  }
}

TEST(RdzvDecideJoin, Closing) {
  const JoinCase cases[] = {
      {"in the close: wait on the rank key", closing(0, 3, "x", k_now - 1'000), 2, 0, 2, 4,
       JoinStep::await_assignment, k_now + k_block},
      {"the stale bound caps the wait", closing(0, 3, "x", k_now - k_stale + 1'000), 3, 0, 2, 4,
       JoinStep::await_assignment, k_now + 1'001},
      {"at the stale bound: not yet", closing(0, 3, "x", k_now - k_stale), 1, 0, 2, 4,
       JoinStep::await_assignment, k_now + 1},
      {"closer went silent", closing(0, 3, "x", k_now - k_stale - 1), 1, 0, 2, 4,
       JoinStep::abort_stale_close},
      {"stale, seen by a newcomer", closing(0, 3, "x", k_now - k_stale - 1), 0, -1, 2, 4,
       JoinStep::abort_stale_close},
      {"slot beyond the close polls", closing(0, 3, "x", k_now), 4, 0, 2, 4, JoinStep::wait,
       k_now + k_poll},
      {"no slot polls", closing(0, 3, "x", k_now), 0, -1, 2, 4, JoinStep::wait, k_now + k_poll},
      {"slot of an older round polls", closing(1, 3, "x", k_now), 2, 0, 2, 4, JoinStep::wait,
       k_now + k_poll},
  };
  for (const auto& tc : cases) {
    check(tc);
  }
}

TEST(RdzvDecideJoin, Complete) {
  const JoinCase cases[] = {
      {"own slot: read the assignment", complete(0, 3), 3, 0, 2, 4, JoinStep::await_assignment,
       k_now + 60'000},
      {"no slot, room: wait list", complete(0, 3), 0, -1, 2, 4, JoinStep::join_wait_list},
      {"slot beyond size: wait list", complete(0, 3), 4, 0, 2, 4, JoinStep::join_wait_list},
      {"already counted: wait", complete(0, 3), 0, -1, 2, 4, JoinStep::wait, k_now + k_poll, k_now,
       0},
      {"counted in an older round", complete(1, 3), 0, -1, 2, 4, JoinStep::join_wait_list, -1,
       k_now, 0},
      {"full: a spare, counted", complete(0, 4), 0, -1, 2, 4, JoinStep::join_wait_list},
      {"full, slot beyond size: a spare", complete(0, 4), 5, 0, 2, 4, JoinStep::join_wait_list},
      {"full, counted spare: wait", complete(0, 4), 0, -1, 2, 4, JoinStep::wait, k_now + k_poll,
       k_now, 0},
  };
  for (const auto& tc : cases) {
    check(tc);
  }
}

TEST(RdzvDecideJoin, StepNames) {
  EXPECT_EQ(to_string(JoinStep::take_slot), "take_slot");
  EXPECT_EQ(to_string(JoinStep::abort_stale_close), "abort_stale_close");
  EXPECT_EQ(to_string(RunSignal::membership_changed), "membership_changed");
  EXPECT_EQ(to_string(RunSignal::store_lost), "store_lost");
}

TEST(RdzvTransition, DeadlineStartsTheLastCallOnce) {
  auto h = with_deadline(joining(2), 2, k_now, settings(2, 4));
  ASSERT_TRUE(h);
  EXPECT_EQ(h->deadline, std::optional<WallMs>(k_now + 30'000));
  EXPECT_EQ(h->round, 2);
  EXPECT_FALSE(with_deadline(*h, 2, k_now + 5, settings(2, 4))) << "already set";
  EXPECT_FALSE(with_deadline(joining(3), 2, k_now, settings(2, 4))) << "other round";
  EXPECT_FALSE(with_deadline(closed(joining(2)), 2, k_now, settings(2, 4)));
  EXPECT_FALSE(with_deadline(closing(2, 2, "x", k_now), 2, k_now, settings(2, 4)));
}

TEST(RdzvTransition, ClaimMovesToClosing) {
  auto h = with_claim(joining(1, k_now - 5), 1, 6, a.id(), k_now);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->phase, Phase::closing);
  EXPECT_EQ(h->size, 6);
  EXPECT_EQ(h->closer, a.id());
  EXPECT_EQ(h->closing_since, k_now);
  EXPECT_EQ(h->deadline, std::optional<WallMs>(k_now - 5));
  EXPECT_FALSE(with_claim(*h, 1, 6, b.id(), k_now)) << "someone else claimed";
  EXPECT_FALSE(with_claim(joining(2), 1, 6, a.id(), k_now));
  EXPECT_FALSE(with_claim(closed(joining(1)), 1, 6, a.id(), k_now));
  EXPECT_FALSE(with_claim(complete(1, 2), 1, 6, a.id(), k_now));
}

TEST(RdzvTransition, NextRoundStartsEmptyAndSaysWhy) {
  RoundHeader h = complete(4, 3);
  h.failed_round = FailedRound{4, a.id(), 0, ""};
  h.waiting = 2;
  h.waiting_ids = {d.id()};
  h.error = "x";
  auto n = with_next_round(h, 4, Phase::complete, {c.id()}, {b.id()});
  ASSERT_TRUE(n);
  RoundHeader expected;
  expected.round = 5;
  expected.failed_round = FailedRound{4, a.id(), 0, ""};
  expected.ended = RoundEnd{4, {c.id()}, {b.id()}};
  EXPECT_EQ(*n, expected);
  EXPECT_FALSE(with_next_round(h, 3, Phase::complete, {}, {})) << "other round";
  EXPECT_FALSE(with_next_round(h, 4, Phase::closing, {}, {})) << "other phase";
  EXPECT_FALSE(with_next_round(closed(h), 4, Phase::complete, {}, {}));
  auto from_closing = with_next_round(closing(4, 2, "x", k_now), 4, Phase::closing, {}, {});
  ASSERT_TRUE(from_closing);
  EXPECT_EQ(from_closing->round, 5);
  EXPECT_EQ(from_closing->phase, Phase::joining);
}

TEST(RdzvTransition, NextRoundCutsIdLists) {
  std::vector<std::string> many;
  many.reserve(40);
  for (int i = 0; i < 40; ++i) {
    many.push_back(node("n" + std::to_string(i)).id());
  }
  auto n = with_next_round(complete(0, 40), 0, Phase::complete, many, many);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->ended.left.size(), k_max_named_ids);
  EXPECT_EQ(n->ended.lost.size(), k_max_named_ids);
  EXPECT_EQ(n->ended.left.back(), many[31]);
}

TEST(RdzvTransition, WaitListCountsAndNames) {
  auto one = with_waiting(complete(2, 2), 2, c.id(), 1);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->waiting, 1);
  EXPECT_EQ(one->waiting_ids, std::vector<std::string>{c.id()});
  auto two = with_waiting(*one, 2, d.id(), 1);
  ASSERT_TRUE(two);
  EXPECT_EQ(two->waiting, 2);
  EXPECT_EQ(two->waiting_ids, (std::vector<std::string>{c.id(), d.id()}));
  auto back = with_waiting(*two, 2, c.id(), -1);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->waiting, 1);
  EXPECT_EQ(back->waiting_ids, std::vector<std::string>{d.id()});
  EXPECT_TRUE(with_waiting(closing(2, 2, "x", k_now), 2, c.id(), 1)) << "closing counts too";
  EXPECT_FALSE(with_waiting(joining(2), 2, c.id(), 1)) << "a joining round takes slots";
  EXPECT_FALSE(with_waiting(complete(3, 2), 2, c.id(), 1)) << "other round";
  EXPECT_FALSE(with_waiting(closed(complete(2, 2)), 2, c.id(), 1));
  EXPECT_FALSE(with_waiting(complete(2, 2), 2, c.id(), -1)) << "nobody to remove";
}

TEST(RdzvTransition, WaitListNamesOnlyTheFirst32) {
  RoundHeader h = complete(0, 1);
  for (int i = 0; i < 40; ++i) {
    auto n = with_waiting(h, 0, node("w" + std::to_string(i)).id(), 1);
    ASSERT_TRUE(n);
    h = *n;
  }
  EXPECT_EQ(h.waiting, 40);
  EXPECT_EQ(h.waiting_ids.size(), k_max_named_ids);
  auto less = with_waiting(h, 0, node("w39").id(), -1);  // not named: only the count changes
  ASSERT_TRUE(less);
  EXPECT_EQ(less->waiting, 39);
  EXPECT_EQ(less->waiting_ids.size(), k_max_named_ids);
}

TEST(RdzvTransition, FailureIsReportedOncePerRoundAndTheEarliestStands) {
  auto h = with_failure(complete(3, 2), FailedRound{3, b.id(), 500, "rank 1 failed"});
  ASSERT_TRUE(h);
  EXPECT_EQ(h->failed_round, (FailedRound{3, b.id(), 500, "rank 1 failed"}));
  EXPECT_EQ(h->causes, std::vector<std::string>{b.id()});
  EXPECT_FALSE(with_failure(*h, FailedRound{3, a.id(), 500, ""})) << "not earlier";
  EXPECT_FALSE(with_failure(*h, FailedRound{3, b.id(), 100, ""})) << "same reporter";
  auto earlier = with_failure(*h, FailedRound{3, a.id(), 499, "rank 0 failed"});
  ASSERT_TRUE(earlier) << "an earlier failure is the root cause";
  EXPECT_EQ(earlier->failed_round->reporter, a.id());
  EXPECT_EQ(earlier->causes, std::vector<std::string>{a.id()});
  RoundHeader moved_on = *with_next_round(*h, 3, Phase::complete, {}, {});
  auto late = with_failure(moved_on, FailedRound{3, a.id(), 10, ""});
  ASSERT_TRUE(late) << "the header moved on, the round's root cause is still settled";
  EXPECT_EQ(late->round, 4);
  EXPECT_EQ(late->causes, std::vector<std::string>{a.id()});
  RoundHeader older = complete(3, 2);
  older.failed_round = FailedRound{2, a.id(), 0, ""};
  older.causes = {a.id()};
  auto newer = with_failure(older, FailedRound{3, b.id(), 1, ""});
  ASSERT_TRUE(newer);
  EXPECT_EQ(newer->failed_round, (FailedRound{3, b.id(), 1, ""}));
  EXPECT_EQ(newer->causes, (std::vector<std::string>{a.id(), b.id()}));
  EXPECT_FALSE(with_failure(complete(4, 2), FailedRound{3, a.id(), 0, ""})) << "other round";
  EXPECT_FALSE(with_failure(joining(3), FailedRound{3, a.id(), 0, ""})) << "not running";
  EXPECT_FALSE(with_failure(closed(complete(3, 2)), FailedRound{3, a.id(), 0, ""}));
}

TEST(RdzvTransition, CausesKeepTheLatestNamedIds) {
  RoundHeader h = complete(0, 2);
  for (int r = 0; r < static_cast<int>(k_max_named_ids) + 3; ++r) {
    h.round = r;
    h = *with_failure(h, FailedRound{r, r % 2 == 0 ? a.id() : b.id(), 0, ""});
  }
  EXPECT_EQ(h.causes.size(), k_max_named_ids);
  EXPECT_EQ(h.causes.back(), a.id());
}

TEST(RdzvTransition, CloseOnce) {
  auto h = with_closed(complete(1, 2), true, 5000);
  ASSERT_TRUE(h);
  EXPECT_TRUE(h->closed);
  EXPECT_EQ(h->round, 1);
  EXPECT_EQ(h->closed_at, 5000);
  EXPECT_TRUE(h->finished);
  EXPECT_FALSE(with_closed(*h, false, 6000)) << "the first close stands";
  auto failed = with_closed(complete(1, 2), false, 7000);
  ASSERT_TRUE(failed);
  EXPECT_FALSE(failed->finished);
}

TEST(RdzvTransition, CompleteTakesThePlansFacts) {
  ClosePlan plan;
  plan.complete = true;
  plan.members = {a, b, c};
  plan.workers = 12;
  plan.error = "two static";
  RoundHeader h = closing(2, 4, a.id(), k_now);
  h.deadline = k_now - 1;
  auto n = with_complete(h, 2, a.id(), plan);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->phase, Phase::complete);
  EXPECT_FALSE(n->deadline);
  EXPECT_TRUE(n->closer.empty());
  EXPECT_EQ(n->members, 3);
  EXPECT_EQ(n->workers, 12);
  EXPECT_EQ(n->error, "two static");
  EXPECT_EQ(n->size, 4);
  EXPECT_FALSE(with_complete(h, 2, b.id(), plan)) << "not the closer";
  EXPECT_FALSE(with_complete(h, 1, a.id(), plan)) << "other round";
  EXPECT_FALSE(with_complete(joining(2), 2, a.id(), plan)) << "aborted meanwhile";
  EXPECT_FALSE(with_complete(closed(h), 2, a.id(), plan));
}

TEST(RdzvTransition, AbortGoesBackToJoiningAndRemembersTheCheck) {
  ClosePlan keep;
  keep.keep_deadline = true;
  RoundHeader h = closing(2, 4, a.id(), k_now);
  h.deadline = k_now + 9;
  const auto s = settings(2, 4);
  auto kept = with_abort(h, 2, a.id(), keep, k_now, s);
  ASSERT_TRUE(kept);
  EXPECT_EQ(*kept, joining(2, k_now + 9, 4));
  auto dropped = with_abort(h, 2, a.id(), ClosePlan{}, k_now, s);
  ASSERT_TRUE(dropped);
  EXPECT_EQ(*dropped, joining(2, std::nullopt, 4));
  RoundHeader no_call = h;
  no_call.deadline.reset();
  auto started = with_abort(no_call, 2, a.id(), keep, k_now, s);
  ASSERT_TRUE(started);
  EXPECT_EQ(*started, joining(2, k_now + s.last_call_timeout.count(), 4))
      << "min nodes are in: the last call starts";
  ClosePlan unwritten;
  unwritten.missing = 1;
  auto again = with_abort(h, 2, a.id(), unwritten, k_now, s);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->checked, h.checked) << "a slot still being written: the same slots may claim";
  EXPECT_FALSE(with_abort(h, 2, b.id(), keep, k_now, s)) << "not the closer";
  EXPECT_FALSE(with_abort(joining(2), 2, a.id(), keep, k_now, s));
  EXPECT_FALSE(with_abort(closed(h), 2, a.id(), keep, k_now, s));
}

struct RunCase {
  const char* name;
  RoundHeader header;
  int max_nodes;
  RunSignal expected;
};

RoundHeader failed_by(RoundHeader h, int round, const NodeDesc& n) {
  h.failed_round = FailedRound{round, n.id(), 0, ""};
  return h;
}

RoundHeader waiting(RoundHeader h, int n, int standby = 0) {
  h.waiting = n;
  h.standby = standby;
  return h;
}

TEST(RdzvDecideWhileRunning, Table) {
  const auto ab = complete(3, 2);
  const RunCase cases[] = {
      {"steady", ab, 4, RunSignal::none},
      {"closed", closed(ab), 4, RunSignal::closed},
      {"closed before a failure", closed(failed_by(ab, 3, b)), 4, RunSignal::closed},
      {"peer failed", failed_by(ab, 3, b), 4, RunSignal::peer_failed},
      {"peer failed after the round moved on", failed_by(joining(4), 3, b), 4,
       RunSignal::peer_failed},
      {"own failure report", failed_by(ab, 3, a), 4, RunSignal::none},
      {"own report, round moved on", failed_by(joining(4), 3, a), 4, RunSignal::membership_changed},
      {"old failure report", failed_by(ab, 2, b), 4, RunSignal::none},
      {"round moved on", joining(4), 4, RunSignal::membership_changed},
      {"round moved on and complete", complete(4, 2), 4, RunSignal::membership_changed},
      {"waiting with room", waiting(ab, 1), 4, RunSignal::membership_changed},
      {"waiting, full", waiting(ab, 1), 2, RunSignal::none},
      {"only the segment's standbys wait", waiting(ab, 2, 2), 4, RunSignal::none},
      {"a newcomer beyond the standbys", waiting(ab, 3, 2), 4, RunSignal::membership_changed},
  };
  for (const auto& tc : cases) {
    EXPECT_EQ(to_string(decide_while_running(tc.header, a, 3, settings(1, tc.max_nodes))),
              to_string(tc.expected))
        << tc.name;
  }
}

TEST(RdzvWithWaiting, AStandbyThatLeavesTheWaitListLeavesTheStandbyCountNoLarger) {
  auto h = waiting(complete(3, 2), 2, 2);
  h.waiting_ids = {"x", "y"};
  auto n = with_waiting(h, 3, "x", -1);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->waiting, 1);
  EXPECT_EQ(n->standby, 1);
}

TEST(RdzvIsSilent, NoBeatOrOlderThanTheKeepAliveBound) {
  const auto s = settings(1, 2);
  EXPECT_TRUE(is_silent(std::nullopt, k_now, s));
  EXPECT_FALSE(is_silent(k_now, k_now, s));
  EXPECT_FALSE(is_silent(k_now - k_stale, k_now, s));
  EXPECT_TRUE(is_silent(k_now - k_stale - 1, k_now, s));
  EXPECT_FALSE(is_silent(k_now + 2'000, k_now, s)) << "clock skew: a beat from the future";
}

TEST(RdzvDecideStoreUnreachable, LostOnlyAfterFailingForTheKeepAliveBound) {
  // keep-alive 5 s x 3: lost once the store has failed for 15 s.
  EXPECT_EQ(decide_store_unreachable(std::nullopt, k_now, settings(1, 2)), RunSignal::none);
  EXPECT_EQ(decide_store_unreachable(k_now - 14'999, k_now, settings(1, 2)), RunSignal::none);
  EXPECT_EQ(decide_store_unreachable(k_now - 15'000, k_now, settings(1, 2)), RunSignal::store_lost);
}

TEST(RdzvStaleClose, BoundIsTheKeepAliveBound) {
  EXPECT_EQ(stale_close_bound(settings(1, 2)), std::chrono::milliseconds(k_stale));
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
  EXPECT_EQ(contention_backoff(-3, milliseconds(150), 0.5), milliseconds(0));
  EXPECT_LE(contention_backoff(1000, milliseconds(150), 1.5), milliseconds(150));
  EXPECT_EQ(contention_backoff(3, milliseconds(150), -1.0), milliseconds(0));
}

}  // namespace
}  // namespace ddprun::rdzv
