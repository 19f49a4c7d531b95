#include "ddprun/rdzv/dynamic_rendezvous.hpp"

#include "ddprun/rdzv/members.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "component/rdzv/harness.hpp"

namespace ddprun::rdzv {
namespace {

using namespace std::chrono_literals;
using test::all_done;
using test::Cluster;
using test::fast_settings;
using test::header_of;
using test::make_node;
using test::run_until;
using test::Slot;
using test::start;
using ::testing::HasSubstr;

std::vector<std::string> addrs(const RoundResult& r) {
  std::vector<std::string> out;
  for (const auto& n : r.members) {
    out.push_back(n.addr);
  }
  return out;
}

TEST(RdzvHandler, ThreeNodesFormRoundWithPredictableRanks) {
  Cluster c;
  NodeDesc host = make_node("node-c", 3);
  host.is_endpoint_host = true;
  c.add(make_node("node-b", 1), fast_settings(3, 3));
  c.add(make_node("node-a", 2), fast_settings(3, 3));
  c.add(host, fast_settings(3, 3));
  auto rounds = c.form({0, 1, 2});
  ASSERT_EQ(rounds.size(), 3U);
  // The endpoint host, then the node index (the harness numbers agents as added), not addr.
  EXPECT_EQ(rounds[0].group_rank(), 1);
  EXPECT_EQ(rounds[1].group_rank(), 2);
  EXPECT_EQ(rounds[2].group_rank(), 0);
  for (const auto& r : rounds) {
    EXPECT_EQ(r.round, 0);
    EXPECT_EQ(r.group_world_size(), 3);
    EXPECT_EQ(addrs(r), (std::vector<std::string>{"node-c", "node-b", "node-a"}));
    ASSERT_EQ(r.members.size(), 3U);
    EXPECT_EQ(r.members[0].nproc, 3);
    EXPECT_EQ(r.members[2].nproc, 2);
    EXPECT_EQ(r.assignment.world_size, 6);
  }
  EXPECT_EQ(rounds[2].assignment.worker_base, 0);
  EXPECT_EQ(rounds[0].assignment.worker_base, 3);
  EXPECT_EQ(rounds[1].assignment.worker_base, 4);
  EXPECT_EQ(rounds[2].assignment.watch_id, make_node("node-b").id());
  EXPECT_EQ(rounds[1].assignment.watch_id, host.id());
}

TEST(RdzvHandler, MasterEndpointComesFromGroupRankZero) {
  Cluster c;
  c.add(make_node("node-a"), fast_settings(2, 2));
  c.add(make_node("node-b"), fast_settings(2, 2));
  auto rounds = c.form({0, 1});
  ASSERT_EQ(rounds.size(), 2U);
  ASSERT_EQ(rounds[0].group_rank(), 0);
  auto follower = start(c.ctx_, c.agents_[1]->exchange_master(rounds[1], std::nullopt));
  auto leader =
      start(c.ctx_, c.agents_[0]->exchange_master(rounds[0], MasterEndpoint{"node-a", 29511}));
  ASSERT_TRUE(run_until(c.ctx_, [&] { return leader->has_value() && follower->has_value(); }));
  ASSERT_TRUE(leader->value()) << leader->value().error().message;
  ASSERT_TRUE(follower->value()) << follower->value().error().message;
  EXPECT_EQ(*follower->value(), (MasterEndpoint{"node-a", 29511}));
  EXPECT_EQ(*leader->value(), (MasterEndpoint{"node-a", 29511}));
}

TEST(RdzvHandler, ElasticRoundCompletesAfterLastCall) {
  Cluster c;
  c.add(make_node("node-a"), fast_settings(1, 3));
  c.add(make_node("node-b"), fast_settings(1, 3));
  auto rounds = c.form({0, 1});
  ASSERT_EQ(rounds.size(), 2U);
  EXPECT_EQ(rounds[0].group_world_size(), 2);
  EXPECT_EQ(rounds[0].round, rounds[1].round);
  EXPECT_NE(rounds[0].group_rank(), rounds[1].group_rank());
}

TEST(RdzvHandler, LateJoinerWaitsAndNextRoundIncludesIt) {
  Cluster c;
  for (const char* addr : {"node-a", "node-b", "node-c"}) {
    c.add(make_node(addr), fast_settings(2, 3));
  }
  auto first = c.form({0, 1});
  ASSERT_EQ(first.size(), 2U);
  auto watch_a = c.watch(0);
  auto watch_b = c.watch(1);
  auto late = c.next_rounds({2});
  ASSERT_TRUE(c.wait_for(watch_a));
  ASSERT_TRUE(c.wait_for(watch_b));
  EXPECT_EQ(**watch_a, RunSignal::membership_changed);
  EXPECT_EQ(**watch_b, RunSignal::membership_changed);
  EXPECT_FALSE(late[0]->has_value());
  auto second = c.next_rounds({0, 1});
  second.push_back(late[0]);
  ASSERT_TRUE(run_until(c.ctx_, [&] { return all_done(second); }));
  for (auto& s : second) {
    ASSERT_TRUE(s->value()) << s->value().error().message;
    EXPECT_EQ(s->value()->round, first[0].round + 1);
    EXPECT_EQ(s->value()->group_world_size(), 3);
  }
}

TEST(RdzvHandler, HeartbeatsKeepARunningRoundStable) {
  Cluster c;
  auto settings = fast_settings(2, 2);
  settings.keep_alive_max_attempt = 6;  // silent nodes are dropped after 600 ms
  c.add(make_node("node-a"), settings);
  c.add(make_node("node-b"), settings);
  ASSERT_EQ(c.form({0, 1}).size(), 2U);
  auto watch_a = c.watch(0);
  // Two dead-node periods: without heartbeats both nodes would be dropped by now.
  EXPECT_FALSE(run_until(
      c.ctx_, [&] { return watch_a->has_value(); }, 1300ms));
  const auto h = header_of(c.kv_);
  EXPECT_EQ(h.round, 0);
  EXPECT_EQ(h.phase, Phase::complete);
  EXPECT_EQ(h.members, 2);
  EXPECT_TRUE(h.ended.lost.empty());
}

// node-c (group rank 2) is watched by node-b (rank 1): node-b reports it lost, and node-a sees
// the round end.
TEST(RdzvHandler, ASilentMemberIsReportedLostByItsWatcherAndSurvivorsReform) {
  Cluster c;
  for (const char* addr : {"node-a", "node-b", "node-c"}) {
    c.add(make_node(addr), fast_settings(2, 3));
  }
  ASSERT_EQ(c.form({0, 1, 2}).size(), 3U);
  auto watch_a = c.watch(0);
  auto watch_b = c.watch(1);
  c.kill(2);
  ASSERT_TRUE(c.wait_for(watch_a));
  ASSERT_TRUE(c.wait_for(watch_b));
  EXPECT_EQ(**watch_a, RunSignal::membership_changed);
  EXPECT_EQ(**watch_b, RunSignal::membership_changed);
  const auto h = header_of(c.kv_);
  EXPECT_EQ(h.round, 1);
  EXPECT_EQ(h.ended, (RoundEnd{0, {}, {make_node("node-c").id()}}));
  auto rounds = c.form({0, 1});
  ASSERT_EQ(rounds.size(), 2U);
  EXPECT_EQ(rounds[0].group_world_size(), 2);
  EXPECT_EQ(addrs(rounds[0]), (std::vector<std::string>{"node-a", "node-b"}));
}

TEST(RdzvHandler, BelowMinTimesOutNamingLostNode) {
  Cluster c;
  auto settings = fast_settings(3, 3);
  settings.join_timeout = 1s;
  for (const char* addr : {"node-a", "node-b", "node-c"}) {
    c.add(make_node(addr), settings);
  }
  ASSERT_EQ(c.form({0, 1, 2}).size(), 3U);
  auto watch_a = c.watch(0);
  auto watch_b = c.watch(1);  // node-b watches node-c
  c.kill(2);
  ASSERT_TRUE(c.wait_for(watch_a));
  ASSERT_TRUE(c.wait_for(watch_b));
  EXPECT_EQ(**watch_a, RunSignal::membership_changed);
  auto slots = c.next_rounds({0, 1});
  ASSERT_TRUE(run_until(c.ctx_, [&] { return all_done(slots); }));
  for (auto& s : slots) {
    ASSERT_FALSE(s->value());
    EXPECT_EQ(s->value().error().code, ErrorCode::timeout);
    EXPECT_THAT(s->value().error().message, HasSubstr("round 1 timed out after 1s"));
    EXPECT_THAT(s->value().error().message, HasSubstr("expected 3 nodes"));
    EXPECT_THAT(s->value().error().message, HasSubstr("lost since the previous round: node-c"));
  }
}

TEST(RdzvHandler, JoinTimeoutNamesExpectedAndArrived) {
  Cluster c;
  auto settings = fast_settings(3, 3);
  settings.join_timeout = 500ms;
  c.add(make_node("node-a"), settings);
  auto slots = c.next_rounds({0});
  ASSERT_TRUE(run_until(c.ctx_, [&] { return all_done(slots); }));
  ASSERT_FALSE(slots[0]->value());
  EXPECT_EQ(slots[0]->value().error().message,
            "rendezvous job round 0 timed out after 0.5s (join_timeout): expected 3 nodes, "
            "1 arrived (node-a)");
  EXPECT_EQ(c.kv_.peek(slot_key("job", 0, 1)),
            std::optional<std::string>(encode_withdrawn(c.agents_[0]->self())))
      << "withdrawn";
  EXPECT_EQ(c.kv_.peek(gone_key("job", 0)), std::optional<std::string>("1"));
  EXPECT_EQ(header_of(c.kv_).phase, Phase::joining);
}

TEST(RdzvHandler, ReportedFailureReachesPeersAndBothRestart) {
  Cluster c;
  c.add(make_node("node-a"), fast_settings(2, 2));
  c.add(make_node("node-b"), fast_settings(2, 2));
  ASSERT_EQ(c.form({0, 1}).size(), 2U);
  auto watch_b = c.watch(1);
  auto reported =
      start(c.ctx_, c.agents_[0]->report_failure(FailedRound{0, "", 1, "rank 0 failed"}));
  ASSERT_TRUE(c.wait_for(reported));
  ASSERT_TRUE(reported->value()) << reported->value().error().message;
  ASSERT_TRUE(c.wait_for(watch_b));
  EXPECT_EQ(**watch_b, RunSignal::peer_failed);
  auto rounds = c.form({0, 1});
  ASSERT_EQ(rounds.size(), 2U);
  EXPECT_EQ(rounds[0].round, 1);
  EXPECT_EQ(rounds[1].round, 1);
}

TEST(RdzvHandler, StopWatchEndsWatchWithNone) {
  Cluster c;
  c.add(make_node("node-a"), fast_settings(1, 1));
  ASSERT_EQ(c.form({0}).size(), 1U);
  auto watch_a = c.watch(0);
  EXPECT_FALSE(run_until(
      c.ctx_, [&] { return watch_a->has_value(); }, 200ms));
  c.agents_[0]->stop_watch();
  ASSERT_TRUE(c.wait_for(watch_a));
  EXPECT_EQ(**watch_a, RunSignal::none);
}

TEST(RdzvHandler, ExitBarrierWaitsForEveryNode) {
  Cluster c;
  for (const char* addr : {"node-a", "node-b", "node-c"}) {
    c.add(make_node(addr), fast_settings(3, 3));
  }
  ASSERT_EQ(c.form({0, 1, 2}).size(), 3U);
  auto a = start(c.ctx_, c.agents_[0]->exit_barrier(10s));
  auto b = start(c.ctx_, c.agents_[1]->exit_barrier(10s));
  EXPECT_FALSE(run_until(
      c.ctx_, [&] { return a->has_value() || b->has_value(); }, 200ms));
  auto last = start(c.ctx_, c.agents_[2]->exit_barrier(10s));
  ASSERT_TRUE(
      run_until(c.ctx_, [&] { return a->has_value() && b->has_value() && last->has_value(); }));
  EXPECT_TRUE(a->value());
  EXPECT_TRUE(b->value());
  EXPECT_TRUE(last->value());
}

TEST(RdzvHandler, ExitBarrierTimesOut) {
  Cluster c;
  c.add(make_node("node-a"), fast_settings(2, 2));
  c.add(make_node("node-b"), fast_settings(2, 2));
  ASSERT_EQ(c.form({0, 1}).size(), 2U);
  auto a = start(c.ctx_, c.agents_[0]->exit_barrier(100ms));
  ASSERT_TRUE(c.wait_for(a));
  ASSERT_FALSE(a->value());
  EXPECT_EQ(a->value().error().code, ErrorCode::timeout);
  EXPECT_THAT(a->value().error().message, HasSubstr("1/2 nodes done"));
}

TEST(RdzvHandler, ShutdownClosesForPeersAndLateAgents) {
  Cluster c;
  c.add(make_node("node-a"), fast_settings(1, 3));
  c.add(make_node("node-b"), fast_settings(1, 3));
  ASSERT_EQ(c.form({0, 1}).size(), 2U);
  auto watch_b = c.watch(1);
  auto closed = start(c.ctx_, c.agents_[0]->shutdown());
  ASSERT_TRUE(c.wait_for(closed));
  ASSERT_TRUE(closed->value()) << closed->value().error().message;
  ASSERT_TRUE(c.wait_for(watch_b));
  EXPECT_EQ(**watch_b, RunSignal::closed);
  c.add(make_node("node-late"), fast_settings(1, 3));
  auto late = c.next_rounds({2});
  ASSERT_TRUE(c.wait_for(late[0]));
  ASSERT_FALSE(late[0]->value());
  EXPECT_EQ(late[0]->value().error().code, ErrorCode::closed);
  EXPECT_THAT(late[0]->value().error().message, HasSubstr("rendezvous job is closed"));
}

// Issue #43: a member that comes back after the job ended (its agent was frozen) learns how it
// ended instead of starting a new run: from the closed header while the keys last, from the
// backend's end record once they are gone. (A node that was never part of the run starts a new
// one, as before: EtcdE2E.AnEndRecordExpiresAndTheIdStartsANewJob.)
TEST(RdzvHandler, AMemberThatFindsTheRunClosedAsFinishedIsToldItFinishedWithoutIt) {
  Cluster c;
  c.add(make_node("node-a"), fast_settings(1, 2));
  c.add(make_node("node-b"), fast_settings(1, 2));
  ASSERT_EQ(c.form({0, 1}).size(), 2U);
  auto closed = start(c.ctx_, c.agents_[0]->shutdown(true));
  ASSERT_TRUE(c.wait_for(closed));
  EXPECT_TRUE(header_of(c.kv_).finished);
  auto back = c.next_rounds({1});
  ASSERT_TRUE(c.wait_for(back[0]));
  ASSERT_FALSE(back[0]->value());
  EXPECT_EQ(back[0]->value().error().code, ErrorCode::finished_without);
  EXPECT_THAT(back[0]->value().error().message, HasSubstr("rendezvous job: the job finished at "));
}

namespace {
asio::awaitable<Result<std::optional<RunEnd>>> finished_record() {
  co_return std::optional<RunEnd>(RunEnd{1000, true, ""});
}
asio::awaitable<Result<std::optional<RunEnd>>> no_record() { co_return std::optional<RunEnd>(); }
}  // namespace

TEST(RdzvHandler, AMemberThatFindsTheRunsKeysGoneAsksHowItEndedAndStartsNoNewRun) {
  Cluster c;
  c.add(make_node("node-a"), fast_settings(1, 2));
  c.add(make_node("node-b"), fast_settings(1, 2));
  ASSERT_EQ(c.form({0, 1}).size(), 2U);
  c.kv_.poke(state_key("job"), "");  // the last agent out removed the run's keys
  c.agents_[0]->hooks().run_end = finished_record;
  c.agents_[1]->hooks().run_end = no_record;
  auto back = c.next_rounds({0, 1});
  ASSERT_TRUE(c.wait_for(back[0]) && c.wait_for(back[1]));
  ASSERT_FALSE(back[0]->value());
  EXPECT_EQ(back[0]->value().error().code, ErrorCode::finished_without);
  ASSERT_FALSE(back[1]->value());
  EXPECT_EQ(back[1]->value().error().code, ErrorCode::closed);
  EXPECT_THAT(back[1]->value().error().message, HasSubstr("no record says how it ended"));
  EXPECT_EQ(c.kv_.peek(state_key("job")), "") << "no new run was started";
}

TEST(RdzvHandler, LeavingNodeMakesPeersReformWithoutWaitingForTheKeepAliveBound) {
  Cluster c;
  auto settings = fast_settings(2, 3);
  settings.keep_alive_max_attempt = 1000;  // a silent node is dropped only after 100 s
  for (const char* addr : {"node-a", "node-b", "node-c"}) {
    c.add(make_node(addr), settings);
  }
  ASSERT_EQ(c.form({0, 1, 2}).size(), 3U);
  auto watch_a = c.watch(0);
  auto watch_b = c.watch(1);
  auto left = start(c.ctx_, c.agents_[2]->leave(2s));
  ASSERT_TRUE(c.wait_for(left));
  ASSERT_TRUE(left->value()) << left->value().error().message;
  ASSERT_TRUE(c.wait_for(watch_a));
  ASSERT_TRUE(c.wait_for(watch_b));
  EXPECT_EQ(**watch_a, RunSignal::membership_changed);
  EXPECT_EQ(**watch_b, RunSignal::membership_changed);
  EXPECT_EQ(header_of(c.kv_).ended, (RoundEnd{0, {make_node("node-c").id()}, {}}));
  auto rounds = c.form({0, 1});
  ASSERT_EQ(rounds.size(), 2U);
  EXPECT_EQ(addrs(rounds[0]), (std::vector<std::string>{"node-a", "node-b"}));
}

// node-b leaves while it waits for a third node: its slot is withdrawn, so the round that
// forms once node-c and node-d arrive has node-a, node-c and node-d.
TEST(RdzvHandler, AWithdrawnSlotIsNoMember) {
  Cluster c;
  for (const char* addr : {"node-a", "node-b", "node-c", "node-d"}) {
    c.add(make_node(addr), fast_settings(3, 3));
  }
  auto joins = c.next_rounds({0, 1});
  ASSERT_TRUE(run_until(c.ctx_, [&] {
    return c.kv_.peek(slot_key("job", 0, 1)).has_value() &&
           c.kv_.peek(slot_key("job", 0, 2)).has_value();
  }));
  auto left = start(c.ctx_, c.agents_[1]->leave(2s));
  ASSERT_TRUE(c.wait_for(left));
  ASSERT_TRUE(left->value()) << left->value().error().message;
  ASSERT_TRUE(c.wait_for(joins[1]));
  ASSERT_FALSE(joins[1]->value());
  EXPECT_THAT(joins[1]->value().error().message, HasSubstr("leaving"));
  EXPECT_EQ(c.kv_.peek(gone_key("job", 0)), std::optional<std::string>("1"));
  EXPECT_TRUE(header_of(c.kv_).ended.left.empty()) << "leaving a joining round is no news";
  EXPECT_FALSE(joins[0]->has_value()) << "node-a still waits for a third node";
  auto rest = c.next_rounds({2, 3});
  rest.push_back(joins[0]);
  ASSERT_TRUE(run_until(c.ctx_, [&] { return all_done(rest); }));
  for (auto& s : rest) {
    ASSERT_TRUE(s->value()) << s->value().error().message;
    EXPECT_EQ(addrs(*s->value()), (std::vector<std::string>{"node-a", "node-c", "node-d"}));
  }
}

TEST(RdzvHandler, LeavingGivesUpWithinItsBoundWhenTheStoreFails) {
  Cluster c;
  c.add(make_node("node-a"), fast_settings(1, 1));
  ASSERT_EQ(c.form({0}).size(), 1U);
  c.kv_.fail_all(true);
  auto left = start(c.ctx_, c.agents_[0]->leave(2s));
  ASSERT_TRUE(c.wait_for(left));
  ASSERT_FALSE(left->value());
  EXPECT_EQ(left->value().error().code, ErrorCode::io);
}

TEST(RdzvHandler, WatchReportsTheStoreLostOnlyAfterTheKeepAliveBound) {
  Cluster c;
  auto settings = fast_settings(1, 1);
  settings.keep_alive_max_attempt = 30;  // the store may fail for 3 s before it is lost
  c.add(make_node("node-a"), settings);
  ASSERT_EQ(c.form({0}).size(), 1U);
  auto watch_a = c.watch(0);
  c.kv_.fail_all(true);
  EXPECT_FALSE(run_until(
      c.ctx_, [&] { return watch_a->has_value(); }, 200ms))
      << "a short outage is tolerated";
  c.kv_.fail_all(false);
  EXPECT_FALSE(run_until(
      c.ctx_, [&] { return watch_a->has_value(); }, 200ms));
  c.kv_.fail_all(true);
  ASSERT_TRUE(c.wait_for(watch_a));
  EXPECT_EQ(**watch_a, RunSignal::store_lost);
}

TEST(RdzvHandler, StoreFailureIsReported) {
  Cluster c;
  c.add(make_node("node-a"), fast_settings(1, 1));
  c.kv_.fail_all(true);
  auto slots = c.next_rounds({0});
  ASSERT_TRUE(c.wait_for(slots[0]));
  ASSERT_FALSE(slots[0]->value());
  EXPECT_EQ(slots[0]->value().error().code, ErrorCode::io);
}

// etcd under a burst of thousands of agents times out or refuses as overloaded for a while: a
// join pauses and looks again instead of failing the agent (issue #28).
TEST(RdzvHandler, AJoinLooksAgainAfterFailuresTheStoreSaysMayPass) {
  Cluster c;
  c.add(make_node("node-a"), fast_settings(2, 2));
  c.add(make_node("node-b"), fast_settings(2, 2));
  c.kv_.fail_next(6);
  auto rounds = c.form({0, 1});
  ASSERT_EQ(rounds.size(), 2U);
  EXPECT_EQ(rounds[0].round, rounds[1].round);
  EXPECT_EQ(rounds[0].group_world_size(), 2);
  EXPECT_EQ(c.kv_.peek(slots_key("job", 0)), "2") << "a slot counted twice";
}

// The slot's count went through but its node's write did not: the join writes that slot when
// it looks again, rather than counting a second one (which the closer would read as missing).
TEST(RdzvHandler, ASlotWhoseWriteFailedIsWrittenNotCountedAgain) {
  Cluster c;
  c.add(make_node("node-a"), fast_settings(1, 1));
  c.kv_.fail_next(1, 3);  // the header's read, its creation, the count: then the slot's write
  auto rounds = c.form({0});
  ASSERT_EQ(rounds.size(), 1U);
  EXPECT_EQ(rounds[0].group_world_size(), 1);
  EXPECT_EQ(c.kv_.peek(slots_key("job", 0)), "1");
}

TEST(RdzvHandler, CorruptStateIsReported) {
  std::string old_version = encode_header(RoundHeader{});
  old_version.replace(old_version.find("\"version\":8"), 11, "\"version\":7");
  for (const std::string& bad : {std::string("Y2FuaW1hZGFt"), old_version}) {
    Cluster c;
    c.add(make_node("node-a"), fast_settings(1, 1));
    c.kv_.poke(state_key("job"), bad);
    auto slots = c.next_rounds({0});
    ASSERT_TRUE(c.wait_for(slots[0]));
    ASSERT_FALSE(slots[0]->value());
    EXPECT_EQ(slots[0]->value().error().code, ErrorCode::protocol);
    EXPECT_THAT(slots[0]->value().error().message, HasSubstr("rendezvous state of"));
  }
}

/// Forms a round of k_nodes nodes with 1 to 3 workers each and checks each node's assignment
/// and the round's members list (read part by part, as `ddprun status` reads it).
void expect_a_round_of(int k_nodes) {
  Cluster c;
  // One closer plans a thousand slots while the others wait: under a loaded CI machine (and
  // TSan) that can take longer than fast_settings' 500 ms keep-alive bound, after which the
  // others abort the close as stale, again and again. This round's bounds are a real job's
  // kind: the close gets 10 s, the join 18 s (under the harness's 20 s).
  RdzvSettings scale_settings = fast_settings(k_nodes, k_nodes);
  scale_settings.keep_alive_interval = 2s;
  scale_settings.join_timeout = 18s;
  std::vector<std::size_t> all;
  std::map<std::string, int> nproc;
  for (int i = 0; i < k_nodes; ++i) {
    auto n = make_node("node-" + std::to_string(100 + i), 1 + i % 3);
    nproc[n.id()] = n.nproc;
    c.add(n, scale_settings);
    all.push_back(static_cast<std::size_t>(i));
  }
  auto rounds = c.form(all);
  ASSERT_EQ(rounds.size(), static_cast<std::size_t>(k_nodes));
  std::map<int, std::size_t> by_rank;  // group rank -> agent
  for (std::size_t i = 0; i < rounds.size(); ++i) {
    EXPECT_TRUE(rounds[i].members.empty()) << "more than 32 members: no list";
    EXPECT_EQ(rounds[i].group_world_size(), k_nodes);
    by_rank[rounds[i].group_rank()] = i;
  }
  ASSERT_EQ(by_rank.size(), static_cast<std::size_t>(k_nodes));
  int base = 0;
  int total = 0;
  for (const auto& [id, n] : nproc) {
    total += n;
  }
  for (const auto& [rank, i] : by_rank) {
    const auto& a = rounds[i].assignment;
    const auto& self = c.agents_[i]->self();
    EXPECT_EQ(a.worker_base, base) << self.id();
    EXPECT_EQ(a.world_size, total);
    EXPECT_EQ(a.role_base, base);
    const auto& next = c.agents_[by_rank.at((rank + 1) % k_nodes)]->self();
    EXPECT_EQ(a.watch_id, next.id()) << "rank " << rank << " watches rank " << rank + 1;
    base += self.nproc;
  }
  EXPECT_EQ(c.agents_[by_rank.at(0)]->self().addr, "node-100") << "node index order";
  const auto h = header_of(c.kv_);
  EXPECT_EQ(h.members, k_nodes);
  EXPECT_EQ(h.workers, total);
  const auto last_part = static_cast<std::size_t>(k_nodes) / k_members_per_part;
  EXPECT_TRUE(c.kv_.peek(members_key("job", 0, last_part))) << "the list is in parts";
  MembersReader reader("job", 0);
  Result<bool> whole = false;
  for (int request = 0; whole && !*whole && request < 10; ++request) {
    std::vector<std::string> texts;
    for (const auto& key : reader.next_keys()) {
      texts.push_back(c.kv_.peek(key).value_or(""));
    }
    whole = reader.take(texts);
  }
  ASSERT_TRUE(whole) << whole.error().message;
  ASSERT_TRUE(*whole);
  const auto list = reader.take_list();
  ASSERT_EQ(list.size(), static_cast<std::size_t>(k_nodes));
  for (const auto& [rank, i] : by_rank) {
    EXPECT_EQ(list[static_cast<std::size_t>(rank)].id(), c.agents_[i]->self().id());
  }
}

TEST(RdzvHandler, FortyNodesFormWithoutAMembersListAndWithPrefixSums) { expect_a_round_of(40); }

TEST(RdzvHandler, ARoundOfMoreThanAThousandNodesHasItsMembersListInParts) {
  expect_a_round_of(static_cast<int>(k_members_per_part) + 1);
}

TEST(RdzvHandler, TwoStaticNodesWithOneRankIsAConfigErrorOnEveryNode) {
  Cluster c;
  auto settings = fast_settings(3, 3);
  settings.unique_node_index = true;
  for (auto [addr, index] :
       {std::pair{"node-a", 0}, std::pair{"node-b", 0}, std::pair{"node-c", 1}}) {
    auto n = make_node(addr);
    n.node_index = index;
    c.add(n, settings);
  }
  auto slots = c.next_rounds({0, 1, 2});
  ASSERT_TRUE(run_until(c.ctx_, [&] { return all_done(slots); }));
  for (auto& s : slots) {
    ASSERT_FALSE(s->value());
    EXPECT_EQ(s->value().error().code, ErrorCode::config);
    EXPECT_EQ(s->value().error().message,
              "--node-rank 0 is used by two agents: node-a (pid 4242) and node-b (pid 4242); each "
              "node needs its own rank");
  }
}

}  // namespace
}  // namespace ddprun::rdzv
