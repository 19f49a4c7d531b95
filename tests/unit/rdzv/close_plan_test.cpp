// plan_close: who is in a round and what every slot gets.

#include "ddprun/rdzv/decide.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "unit/rdzv/fixtures.hpp"

namespace ddprun::rdzv {
namespace {

using test::joining;
using test::node;
using test::read;
using test::settings;
using test::withdrawn;

constexpr WallMs k_now = 1'000'000;
constexpr WallMs k_stale = 15'000;  // keep-alive 5 s x 3

const NodeDesc a = node("a");
const NodeDesc b = node("b");
const NodeDesc c = node("c");
const NodeDesc d = node("d");
const NodeDesc e = node("e");

std::vector<std::string> ids(const std::vector<NodeDesc>& nodes) {
  std::vector<std::string> out;
  out.reserve(nodes.size());
  for (const auto& n : nodes) {
    out.push_back(n.id());
  }
  return out;
}

std::vector<std::string> whys(const ClosePlan& plan) {
  std::vector<std::string> out;
  for (const auto& x : plan.assignments) {
    out.push_back(x.member ? "member" : x.why);
  }
  return out;
}

TEST(RdzvPlanClose, LeavesOutWithdrawnSilentDuplicateUnreadableAndLateSlots) {
  const std::vector<SlotRead> reads{
      read(a, k_now),
      withdrawn(),
      read(b, k_now - k_stale - 1),
      read(a, k_now),
      SlotRead{"{not a node", std::to_string(k_now)},
      read(c, k_now - k_stale),
      SlotRead{encode_node(d), "garbage"},
      read(d, k_now),
      read(e, k_now),
  };
  const auto plan = plan_close(reads, joining(), k_now, settings(2, 3));
  EXPECT_TRUE(plan.complete);
  EXPECT_EQ(plan.live, 3);
  EXPECT_EQ(whys(plan),
            (std::vector<std::string>{"member", "withdrawn", "silent", "duplicate", "unreadable",
                                      "member", "silent", "member", "late"}));
  EXPECT_EQ(ids(plan.members), ids({a, c, d}));
  EXPECT_EQ(plan.workers, 3);
  EXPECT_TRUE(plan.error.empty());
}

TEST(RdzvPlanClose, BelowMinStaysJoiningAndDropsTheLastCall) {
  const auto plan = plan_close({read(a, k_now), read(b, k_now), read(c, k_now - k_stale - 1)},
                               joining(0, k_now - 1), k_now, settings(3, 4));
  EXPECT_FALSE(plan.complete);
  EXPECT_FALSE(plan.keep_deadline);
  EXPECT_EQ(plan.live, 2);
  EXPECT_TRUE(plan.members.empty());
  EXPECT_TRUE(plan.assignments.empty());
}

TEST(RdzvPlanClose, MinButNotMaxBeforeTheDeadlineKeepsTheLastCall) {
  const std::vector<SlotRead> reads{read(a, k_now), withdrawn(), read(b, k_now), read(c, k_now)};
  for (const auto& h : {joining(0, k_now + 1), joining()}) {
    const auto plan = plan_close(reads, h, k_now, settings(2, 4));
    EXPECT_FALSE(plan.complete);
    EXPECT_TRUE(plan.keep_deadline);
    EXPECT_EQ(plan.live, 3);
    EXPECT_TRUE(plan.assignments.empty());
  }
}

TEST(RdzvPlanClose, CompletesAtMaxOrAfterTheDeadlineWithMin) {
  const std::vector<SlotRead> two{read(a, k_now), read(b, k_now)};
  EXPECT_TRUE(plan_close(two, joining(), k_now, settings(1, 2)).complete) << "max";
  EXPECT_TRUE(plan_close(two, joining(0, k_now), k_now, settings(2, 4)).complete) << "deadline";
  EXPECT_FALSE(plan_close(two, joining(0, k_now), k_now, settings(3, 4)).complete) << "below min";
  const auto plan = plan_close(two, joining(0, k_now - 1), k_now, settings(2, 4));
  ASSERT_TRUE(plan.complete);
  EXPECT_EQ(plan.live, 2);
  EXPECT_EQ(plan.assignments.size(), 2U);
}

// The endpoint host, then the scheduler's index, then join order (rank_order.hpp): not the
// addresses' order.
TEST(RdzvPlanClose, RanksFollowTheEndpointHostTheSchedulerIndexThenJoinOrder) {
  NodeDesc host = node("zz");
  host.is_endpoint_host = true;
  NodeDesc indexed = node("yy");
  indexed.node_index = 0;
  const auto plan =
      plan_close({read(b, k_now), read(indexed, k_now), read(host, k_now), read(a, k_now)},
                 joining(), k_now, settings(4, 4));
  ASSERT_TRUE(plan.complete);
  EXPECT_EQ(ids(plan.members), ids({host, indexed, b, a}));
  ASSERT_EQ(plan.assignments.size(), 4U);
  EXPECT_EQ(plan.assignments[0].group_rank, 2);
  EXPECT_EQ(plan.assignments[1].group_rank, 1);
  EXPECT_EQ(plan.assignments[2].group_rank, 0);
  EXPECT_EQ(plan.assignments[3].group_rank, 3);
  for (const auto& x : plan.assignments) {
    EXPECT_EQ(x.group_world_size, 4);
  }
}

NodeDesc worker_node(const std::string& addr, int nproc, const std::string& role) {
  NodeDesc n = node(addr);
  n.nproc = nproc;
  n.role = role;
  return n;
}

TEST(RdzvPlanClose, WorkerAndRolePrefixSumsAndTheWatchRing) {
  const NodeDesc ta = worker_node("a", 4, "trainer");
  const NodeDesc eb = worker_node("b", 2, "eval");
  const NodeDesc tc = worker_node("c", 8, "trainer");
  const NodeDesc ed = worker_node("d", 1, "eval");
  // Ranks in join order, roles interleaved; slot 3 withdrawn.
  const auto plan =
      plan_close({read(ed, k_now), read(tc, k_now), withdrawn(), read(ta, k_now), read(eb, k_now)},
                 joining(), k_now, settings(4, 4));
  ASSERT_TRUE(plan.complete);
  EXPECT_EQ(plan.workers, 15);
  ASSERT_EQ(plan.assignments.size(), 5U);
  auto at = [&](int slot) { return plan.assignments[static_cast<std::size_t>(slot - 1)]; };
  //                  member rank  gws  base  world  role_base  role_world  watch
  EXPECT_EQ(at(1), (Assignment{true, "", 0, 4, 0, 15, 0, 3, tc.id(), ""}));
  EXPECT_EQ(at(2), (Assignment{true, "", 1, 4, 1, 15, 0, 12, ta.id(), ""}));
  EXPECT_EQ(at(4), (Assignment{true, "", 2, 4, 9, 15, 8, 12, eb.id(), ""}));
  EXPECT_EQ(at(5), (Assignment{true, "", 3, 4, 13, 15, 1, 3, ed.id(), ""}));
  EXPECT_FALSE(at(3).member);
  EXPECT_EQ(at(3).why, "withdrawn");
}

TEST(RdzvPlanClose, ASingleMemberWatchesNobody) {
  const auto plan = plan_close({read(a, k_now)}, joining(), k_now, settings(1, 1));
  ASSERT_TRUE(plan.complete);
  ASSERT_EQ(plan.assignments.size(), 1U);
  EXPECT_TRUE(plan.assignments[0].member);
  EXPECT_TRUE(plan.assignments[0].watch_id.empty());
}

TEST(RdzvPlanClose, TheWatchRingOfALargeRoundIsOneCycle) {
  std::vector<SlotRead> reads;
  reads.reserve(40);
  for (int i = 0; i < 40; ++i) {
    reads.push_back(read(node("n" + std::to_string(100 + i)), k_now));
  }
  const auto plan = plan_close(reads, joining(), k_now, settings(40, 40));
  ASSERT_TRUE(plan.complete);
  ASSERT_EQ(plan.members.size(), 40U);
  std::map<std::string, std::string> next;
  std::set<int> ranks;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    next[decode_node(reads[i].node)->id()] = plan.assignments[i].watch_id;
    ranks.insert(plan.assignments[i].group_rank);
    EXPECT_EQ(plan.assignments[i].worker_base, plan.assignments[i].group_rank);
  }
  EXPECT_EQ(ranks.size(), 40U);
  std::set<std::string> seen;
  std::string at = plan.members[0].id();
  for (int i = 0; i < 40; ++i) {
    seen.insert(at);
    at = next.at(at);
  }
  EXPECT_EQ(at, plan.members[0].id());
  EXPECT_EQ(seen.size(), 40U);
}

TEST(RdzvPlanClose, TwoStaticNodesWithOneRankIsAnErrorForEveryMember) {
  NodeDesc first = node("a", 7);
  first.node_index = 0;
  NodeDesc second = node("b", 8);
  second.node_index = 0;
  NodeDesc other = node("c");
  other.node_index = 1;
  auto s = settings(3, 3);
  s.unique_node_index = true;
  const auto plan =
      plan_close({read(other, k_now), withdrawn(), read(second, k_now), read(first, k_now)},
                 joining(), k_now, s);
  ASSERT_TRUE(plan.complete);
  EXPECT_EQ(plan.error,
            "--node-rank 0 is used by two agents: a (pid 7) and b (pid 8); each node needs its own "
            "rank");
  ASSERT_EQ(plan.assignments.size(), 4U);
  EXPECT_EQ(plan.assignments[0].error, plan.error);
  EXPECT_EQ(plan.assignments[1].error, "") << "not a member";
  EXPECT_EQ(plan.assignments[2].error, plan.error);
  EXPECT_EQ(plan.assignments[3].error, plan.error);
  auto dynamic = settings(2, 2);  // the dynamic backend: node indexes may repeat
  EXPECT_EQ(plan_close({read(second, k_now), read(first, k_now)}, joining(), k_now, dynamic).error,
            "");
  auto unique = settings(2, 2);
  unique.unique_node_index = true;
  other.node_index = 0;
  first.node_index = 1;
  const auto fine = plan_close({read(other, k_now), read(first, k_now)}, joining(), k_now, unique);
  ASSERT_TRUE(fine.complete);
  EXPECT_EQ(fine.error, "");
}

/// Whether any of `slots` (live in round 0 of `h`) may still set a deadline or claim the close
/// before the join deadline, without a newcomer.
bool someone_closes(const RoundHeader& h, const std::vector<int>& slots, const RdzvSettings& s) {
  constexpr WallMs join_deadline = k_now + 600'000;
  for (WallMs now = k_now; now < join_deadline; now += 1'000) {
    for (int slot : slots) {
      const auto step =
          decide_join(h, JoinView{slot, 0, -1, std::nullopt, now, join_deadline}, s).step;
      if (step == JoinStep::set_deadline || step == JoinStep::claim) {
        return true;
      }
    }
  }
  return false;
}

// A closer that reached max before anyone started the last call finds one slot withdrawn: min
// nodes are still in, so the round keeps joining with no last call running. Someone among the
// live slots must still be able to close the round before the join timeout, without waiting
// for a newcomer.
TEST(RdzvPlanClose, AnAbortThatKeepsTheLastCallStillLetsTheRoundClose) {
  const auto s = settings(2, 3);
  auto claimed = with_claim(joining(), 0, 3, c.id(), k_now);
  ASSERT_TRUE(claimed);
  const auto plan = plan_close({withdrawn(), read(b, k_now), read(c, k_now)}, *claimed, k_now, s);
  ASSERT_FALSE(plan.complete);
  ASSERT_TRUE(plan.keep_deadline);
  auto h = with_abort(*claimed, 0, c.id(), plan, k_now, s);
  ASSERT_TRUE(h);
  EXPECT_TRUE(someone_closes(*h, {2, 3}, s))
      << "slots 2 and 3 only ever await their rank keys: the header is " << encode_header(*h);
}

// min == max == 2: the node in slot 2 claims while slot 1's node is still being written (ADD
// done, MULTI_SET in flight), so slot 1 reads as empty and the close aborts. Once slot 1 is
// written, both nodes are live: one of them must be able to claim again.
TEST(RdzvPlanClose, AnAbortOnASlotStillBeingWrittenStillLetsTheRoundClose) {
  const auto s = settings(2, 2);
  auto claimed = with_claim(joining(), 0, 2, b.id(), k_now);
  ASSERT_TRUE(claimed);
  const auto plan = plan_close({test::missing(), read(b, k_now)}, *claimed, k_now, s);
  ASSERT_FALSE(plan.complete);
  EXPECT_EQ(plan.missing, 1);
  EXPECT_EQ(plan.assignments.size(), 0U);
  auto h = with_abort(*claimed, 0, b.id(), plan, k_now, s);
  ASSERT_TRUE(h);
  EXPECT_TRUE(someone_closes(*h, {1, 2}, s))
      << "slots 1 and 2 only ever await their rank keys: the header is " << encode_header(*h);
}

NodeDesc in_domain(const std::string& addr, const std::string& domain) {
  NodeDesc n = node(addr);
  n.domain = domain;
  return n;
}

TEST(RdzvPlanClose, SegmentsPlaceWholeRunsOfADomainAndLeaveTheRestStandingBy) {
  auto s = settings(4, 4);
  s.segment = 2;
  const auto a1 = in_domain("a1", "A");
  const auto c1 = in_domain("c1", "C");
  const auto b1 = in_domain("b1", "B");
  const auto a2 = in_domain("a2", "A");
  const auto b2 = in_domain("b2", "B");
  const auto plan = plan_close(
      {read(a1, k_now), read(c1, k_now), read(b1, k_now), read(a2, k_now), read(b2, k_now)},
      joining(), k_now, s);
  ASSERT_TRUE(plan.complete);
  EXPECT_EQ(ids(plan.members), ids({a1, a2, b1, b2}));
  EXPECT_EQ(whys(plan),
            (std::vector<std::string>{"member", "standby", "member", "member", "member"}));
  EXPECT_EQ(plan.standby, 1);
  EXPECT_EQ(plan.segment, 2);
  auto h = with_complete(test::closing(0, 5, a1.id(), k_now), 0, a1.id(), plan);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->segment, 2);
  EXPECT_EQ(h->standby, 1);
}

// Four live nodes of four domains, MIN 2 and segments of 2: no whole segment. The last call
// must not stay armed (its end would claim again at once, forever): it goes, and the round
// waits for a node that can make a segment.
TEST(RdzvPlanClose, TooFewWholeSegmentsDropTheLastCallEvenWithMinLive) {
  auto s = settings(2, 4);
  s.segment = 2;
  const auto plan = plan_close({read(in_domain("a", "A"), k_now), read(in_domain("b", "B"), k_now),
                                read(in_domain("c", "C"), k_now)},
                               joining(0, k_now - 1), k_now, s);
  EXPECT_FALSE(plan.complete);
  EXPECT_FALSE(plan.keep_deadline);
  EXPECT_EQ(plan.live, 3);
}

TEST(RdzvPlanClose, WithoutSegmentsTheRoundIsCutAtMaxInJoinOrder) {
  auto s = settings(1, 2);
  const auto plan =
      plan_close({read(c, k_now), read(a, k_now), read(b, k_now)}, joining(), k_now, s);
  ASSERT_TRUE(plan.complete);
  EXPECT_EQ(ids(plan.members), ids({c, a}));
  EXPECT_EQ(whys(plan), (std::vector<std::string>{"member", "member", "late"}));
}

}  // namespace
}  // namespace ddprun::rdzv
