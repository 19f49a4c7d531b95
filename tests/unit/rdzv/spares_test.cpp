#include "ddprun/rdzv/spares.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"

namespace ddprun::rdzv {
namespace {

using test::complete;
using test::node;

constexpr WallMs k_now = 1'000'000;

const NodeDesc a = node("10.0.0.1");
const NodeDesc b = node("10.0.0.2");
const NodeDesc c = node("10.0.0.3");
const NodeDesc spare = node("10.0.0.9");

JoinView counted_in(int round, WallMs join_deadline) {
  JoinView v;
  v.waiting_round = round;
  v.now = k_now;
  v.join_deadline = join_deadline;
  return v;
}

TEST(RdzvSpares, ASpareStandsByOnlyOnTheWaitListOfAFullRunningRound) {
  const RdzvSettings s = test::settings(2, 2);
  EXPECT_TRUE(is_standing_by(complete(3, 2), counted_in(3, k_now), s));
  EXPECT_FALSE(is_standing_by(complete(3, 1), counted_in(3, k_now), s)) << "room: it joins soon";
  EXPECT_FALSE(is_standing_by(complete(3, 2), counted_in(2, k_now), s)) << "not counted yet";
  EXPECT_FALSE(is_standing_by(test::joining(3), counted_in(3, k_now), s)) << "a round forms";
  RoundHeader closed = complete(3, 2);
  closed.closed = true;
  EXPECT_FALSE(is_standing_by(closed, counted_in(3, k_now), s));
}

TEST(RdzvSpares, AStandingSpareKeepsAWholeJoinTimeoutAheadOthersKeepTheirs) {
  const RdzvSettings s = test::settings(2, 2);
  const WallMs soon = k_now + 5;
  EXPECT_EQ(join_deadline_after(complete(3, 2), counted_in(3, soon), s),
            k_now + s.join_timeout.count());
  EXPECT_EQ(join_deadline_after(complete(3, 1), counted_in(3, soon), s), soon);
  const WallMs later = k_now + s.join_timeout.count() + 9;
  EXPECT_EQ(join_deadline_after(complete(3, 2), counted_in(3, later), s), later)
      << "never shortened";
}

TEST(RdzvSpares, TheReplacedMembersAreNamedWithWhyTheyAreMissing) {
  RoundHeader h = complete(5, 3);
  h.excluded = {Exclusion{a.id(), 4, 2, "rank 0 failed (exitcode: 1)"}};
  h.ended = RoundEnd{4, {}, {b.id()}};
  const auto got = spare_joined(spare, 3, 5, {a, b, c}, {c, spare}, h);
  EXPECT_EQ(got.spare, spare.id());
  EXPECT_EQ(got.waited_round, 3);
  EXPECT_EQ(got.round, 5);
  ASSERT_EQ(got.replaced.size(), 2U);
  EXPECT_EQ(
      got.replaced[0],
      (Replaced{a.id(), "left out after 2 failed rounds; last: rank 0 failed (exitcode: 1)"}));
  EXPECT_EQ(got.replaced[1], (Replaced{b.id(), "lost"}));
}

TEST(RdzvSpares, AnUnhealthyOrDepartedMemberAndOneSimplyAbsentAreToldApart) {
  RoundHeader h = complete(2, 2);
  h.excluded = {Exclusion{a.id(), 1, 0, "health check failed: exit status 1"}};
  h.ended = RoundEnd{1, {b.id()}, {}};
  const auto got = spare_joined(spare, 1, 2, {a, b, c}, {spare}, h);
  ASSERT_EQ(got.replaced.size(), 3U);
  EXPECT_EQ(got.replaced[0].why, "left out, unhealthy: health check failed: exit status 1");
  EXPECT_EQ(got.replaced[1].why, "left");
  EXPECT_EQ(got.replaced[2].why, "not in round 2");
  RoundHeader older = h;
  older.ended.round = 0;  // about an earlier round: says nothing of this one
  EXPECT_EQ(spare_joined(spare, 1, 2, {b}, {spare}, older).replaced[0].why, "not in round 2");
}

TEST(RdzvSpares, TheMessageNamesTheSpareTheRoundAndEachPlaceItTook) {
  const RdzvSettings s = test::settings(2, 2);
  SpareJoined j{spare.id(), 3, 5, {Replaced{a.id(), "lost"}, Replaced{b.id(), "left"}}};
  EXPECT_EQ(render_spare_joined(j, s), "spare " + spare.id() + " joins round 5 of rendezvous " +
                                           s.run_id + " in place of " + a.id() + " (lost), " +
                                           b.id() + " (left)");
  j.replaced.clear();
  EXPECT_EQ(render_spare_joined(j, s), "spare " + spare.id() + " joins round 5 of rendezvous " +
                                           s.run_id + " (no member of round 3 is missing)");
  RoundHeader h = complete(7, 2);
  h.waiting = 1;
  EXPECT_EQ(render_standing_by(h, s),
            "rendezvous " + s.run_id +
                " round 7 is running with 2 nodes, as many as --nnodes allows: this node stands "
                "by as one of 1 spare(s) and takes a place when a node fails, is left out or is "
                "lost");
}

TEST(RdzvSpares, WithSegmentsTheSpareSaysWhichSegmentItFillsAndAStandbyStandsBy) {
  const RdzvSettings s = test::settings(2, 4);
  SpareJoined j{spare.id(), 3, 5, {Replaced{a.id(), "lost"}}, 1, "A"};
  EXPECT_EQ(render_spare_joined(j, s), "spare " + spare.id() + " joins round 5 of rendezvous " +
                                           s.run_id + " in place of " + a.id() +
                                           " (lost); it fills segment 1 (domain A)");
  RoundHeader h = complete(7, 2);  // room for two more, but the waiting node made no segment
  h.waiting = 1;
  h.segment = 2;
  h.standby = 1;
  EXPECT_TRUE(is_standing_by(h, counted_in(7, k_now), s));
  EXPECT_EQ(render_standing_by(h, s),
            "rendezvous " + s.run_id +
                " round 7 is running with 2 nodes in whole segments of 2 (--segment): this node "
                "stands by as one of 1 spare(s) and takes a place where its domain can make a "
                "whole segment");
}

}  // namespace
}  // namespace ddprun::rdzv
