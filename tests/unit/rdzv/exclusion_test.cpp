#include "ddprun/rdzv/exclusion.hpp"

#include "ddprun/rdzv/decide.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"

namespace ddprun::rdzv {
namespace {

using test::complete;
using test::node;

const NodeDesc a = node("10.0.0.1");
const NodeDesc b = node("10.0.0.2");

/// A header whose failed rounds had these root causes, the last in round `causes.size() - 1`.
RoundHeader failed(const std::vector<std::string>& causes) {
  RoundHeader h = complete(static_cast<int>(causes.size()), 3);
  h.causes = causes;
  h.failed_round = FailedRound{h.round - 1, causes.back(), 7, "rank 4 failed (exitcode: 1)"};
  return h;
}

RdzvSettings elastic(int min_nodes, int max_failures) {
  RdzvSettings s = test::settings(min_nodes, 4);
  s.max_node_failures = max_failures;
  return s;
}

TEST(RdzvExclusion, StreakCountsTheLatestFailuresInARow) {
  EXPECT_EQ(failure_streak(RoundHeader{}, a.id()), 0);
  EXPECT_EQ(failure_streak(failed({a.id(), b.id(), a.id(), a.id()}), a.id()), 2);
  EXPECT_EQ(failure_streak(failed({a.id(), b.id(), a.id(), a.id()}), b.id()), 0);
  EXPECT_EQ(failure_streak(failed({b.id(), b.id()}), b.id()), 2);
}

TEST(RdzvExclusion, TheRootCauseOfKFailuresInARowIsLeftOutWhenTheOthersSuffice) {
  const auto h = failed({b.id(), a.id(), a.id()});
  auto e = decide_exclusion(h, a.id(), 3, elastic(2, 2));
  ASSERT_TRUE(e);
  EXPECT_EQ(*e, (Exclusion{a.id(), 2, 2, "rank 4 failed (exitcode: 1)"}));
  EXPECT_FALSE(decide_exclusion(h, b.id(), 3, elastic(2, 2))) << "not the root cause";
  EXPECT_FALSE(decide_exclusion(h, a.id(), 3, elastic(2, 3))) << "one failure short";
  EXPECT_FALSE(decide_exclusion(h, a.id(), 2, elastic(2, 2))) << "one node would be left";
  EXPECT_FALSE(decide_exclusion(h, a.id(), 3, elastic(2, 0))) << "0: never";
  RoundHeader closed = h;
  closed.closed = true;
  EXPECT_FALSE(decide_exclusion(closed, a.id(), 3, elastic(2, 2)));
}

TEST(RdzvExclusion, ASpareWaitingWhenTheRoundFailedLetsAFixedSizeJobLeaveANodeOut) {
  auto h = failed({a.id(), a.id()});
  const RdzvSettings fixed = elastic(2, 2);  // 2 nodes, --nnodes 2:2 in effect
  EXPECT_FALSE(decide_exclusion(h, a.id(), 2, fixed)) << "no spare: the job needs this node";
  h.failed_round->spares = 1;
  auto e = decide_exclusion(h, a.id(), 2, fixed);
  ASSERT_TRUE(e) << "the spare takes its place";
  EXPECT_EQ(e->node, a.id());
  EXPECT_FALSE(decide_exclusion(h, a.id(), 1, fixed)) << "one spare, one survivor: too few";
}

TEST(RdzvExclusion, WithFailureCountsTheSparesWaitingAndKeepsThemForALaterEarlierReport) {
  RoundHeader h = complete(3, 2);
  h.waiting = 2;
  auto first = with_failure(h, FailedRound{3, b.id(), 50, "rank 1 failed"});
  ASSERT_TRUE(first);
  EXPECT_EQ(first->failed_round->spares, 2);
  RoundHeader moved = *first;  // the round ended meanwhile: the wait list starts over
  moved.round = 4;
  moved.phase = Phase::joining;
  moved.waiting = 0;
  auto earlier = with_failure(moved, FailedRound{3, a.id(), 40, "rank 0 failed"});
  ASSERT_TRUE(earlier);
  EXPECT_EQ(earlier->failed_round->reporter, a.id());
  EXPECT_EQ(earlier->failed_round->spares, 2) << "counted when the round failed";
}

TEST(RdzvExclusion, AnExclusionIsRecordedOnceAndStartsTheCountOver) {
  const Exclusion e{a.id(), 2, 2, "stalled"};
  auto h = with_exclusion(failed({a.id(), a.id()}), e);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->excluded, std::vector<Exclusion>{e});
  EXPECT_TRUE(h->causes.empty());
  EXPECT_FALSE(with_exclusion(*h, e)) << "once";
  EXPECT_EQ(new_exclusions(*h, {}), std::vector<Exclusion>{e});
  EXPECT_TRUE(new_exclusions(*h, h->excluded).empty());
  RoundHeader next = *with_next_round(*h, h->round, Phase::complete, {}, {});
  EXPECT_EQ(next.excluded, h->excluded) << "exclusions outlive the round";
}

TEST(RdzvExclusion, MessageNamesTheNodeTheCountAndTheLastFailure) {
  RdzvSettings s = elastic(2, 2);
  s.run_id = "job7";
  EXPECT_EQ(render_exclusion(Exclusion{"h3_9_0", 4, 2, "rank 5 failed (exitcode: 1)"}, s),
            "node h3_9_0 is left out of rendezvous 'job7': it was the root cause of 2 failed "
            "rounds in a row (max_node_failures=2; last, in round 4: rank 5 failed (exitcode: "
            "1))");
}

TEST(RdzvExclusion, UnhealthyNodeMessageGivesItsHealthCheckReason) {
  RdzvSettings s = elastic(2, 2);
  s.run_id = "job7";
  EXPECT_EQ(render_exclusion(Exclusion{"h3_9_0", 4, 0, "health check failed: disk full"}, s),
            "node h3_9_0 is left out of rendezvous 'job7': it is unhealthy (before round 4: "
            "health check failed: disk full)");
}

}  // namespace
}  // namespace ddprun::rdzv
