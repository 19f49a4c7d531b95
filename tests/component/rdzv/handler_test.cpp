#include "ddprun/rdzv/handler.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "component/rdzv/harness.hpp"

namespace ddprun::rdzv {
namespace {

using namespace std::chrono_literals;
using test::all_done;
using test::fast_settings;
using test::make_node;
using test::run_until;
using test::Slot;
using test::start;
using ::testing::HasSubstr;

/// One io_context, one MemoryKv and the agents of a test.
class Cluster {
 public:
  Cluster() = default;
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;
  ~Cluster() {
    for (auto& a : agents_) {
      if (a) {
        a->stop();
      }
    }
    ctx_.restart();
    ctx_.poll();  // lets the stopped loops see their cancelled timers and finish
  }

  DynamicRendezvous& add(NodeDesc node, RdzvSettings settings) {
    agents_.push_back(
        DynamicRendezvous::create(ctx_, kv_, std::move(settings), std::move(node), clock_));
    return *agents_.back();
  }
  /// Like a crashed agent: it stops heartbeating and never writes again.
  void kill(std::size_t i) {
    agents_.at(i)->stop();
    agents_.at(i).reset();
  }

  std::vector<Slot<Result<RoundResult>>> next_rounds(const std::vector<std::size_t>& who) {
    std::vector<Slot<Result<RoundResult>>> out;
    for (auto i : who) {
      out.push_back(start(ctx_, agents_.at(i)->next_round()));
    }
    return out;
  }
  /// next_round on `who`, all expected to succeed; returns their results.
  std::vector<RoundResult> form(const std::vector<std::size_t>& who) {
    auto slots = next_rounds(who);
    EXPECT_TRUE(run_until(ctx_, [&] { return all_done(slots); }));
    std::vector<RoundResult> out;
    for (auto& s : slots) {
      EXPECT_TRUE(s->has_value() && s->value())
          << (s->has_value() && !s->value() ? s->value().error().message : "not finished");
      if (s->has_value() && s->value()) {
        out.push_back(*s->value());
      }
    }
    return out;
  }
  Slot<RunSignal> watch(std::size_t i) { return start(ctx_, agents_.at(i)->watch()); }
  template <typename T>
  bool wait_for(const Slot<T>& slot) {
    return run_until(ctx_, [&] { return slot->has_value(); });
  }

  asio::io_context ctx_;
  MemoryKv kv_{ctx_};
  util::SystemClock clock_;
  std::vector<std::shared_ptr<DynamicRendezvous>> agents_;
};

std::vector<std::string> addrs(const RoundResult& r) {
  std::vector<std::string> out;
  for (const auto& n : r.participants) {
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
  EXPECT_EQ(rounds[0].group_rank, 2);
  EXPECT_EQ(rounds[1].group_rank, 1);
  EXPECT_EQ(rounds[2].group_rank, 0);
  for (const auto& r : rounds) {
    EXPECT_EQ(r.round, 0);
    EXPECT_EQ(r.group_world_size, 3);
    EXPECT_EQ(addrs(r), (std::vector<std::string>{"node-c", "node-a", "node-b"}));
    EXPECT_EQ(r.participants[0].nproc, 3);
    EXPECT_EQ(r.participants[2].nproc, 1);
  }
}

TEST(RdzvHandler, MasterEndpointComesFromGroupRankZero) {
  Cluster c;
  c.add(make_node("node-a"), fast_settings(2, 2));
  c.add(make_node("node-b"), fast_settings(2, 2));
  auto rounds = c.form({0, 1});
  ASSERT_EQ(rounds.size(), 2U);
  ASSERT_EQ(rounds[0].group_rank, 0);
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
  EXPECT_EQ(rounds[0].group_world_size, 2);
  EXPECT_EQ(rounds[0].round, rounds[1].round);
  EXPECT_NE(rounds[0].group_rank, rounds[1].group_rank);
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
    EXPECT_EQ(s->value()->group_world_size, 3);
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
  auto state = decode_state(c.kv_.peek(state_key("job")).value());
  ASSERT_TRUE(state);
  EXPECT_EQ(state->participants.size(), 2U);
}

TEST(RdzvHandler, SurvivorsReformWhenANodeStopsHeartbeating) {
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
  auto rounds = c.form({0, 1});
  ASSERT_EQ(rounds.size(), 2U);
  EXPECT_EQ(rounds[0].group_world_size, 2);
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
  c.kill(2);
  ASSERT_TRUE(c.wait_for(watch_a));
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
  auto state = decode_state(c.kv_.peek(state_key("job")).value());
  ASSERT_TRUE(state);
  EXPECT_TRUE(state->participants.empty());  // rolled back
}

TEST(RdzvHandler, ReportedFailureReachesPeersAndBothRestart) {
  Cluster c;
  c.add(make_node("node-a"), fast_settings(2, 2));
  c.add(make_node("node-b"), fast_settings(2, 2));
  ASSERT_EQ(c.form({0, 1}).size(), 2U);
  auto watch_b = c.watch(1);
  auto reported = start(c.ctx_, c.agents_[0]->report_failure());
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
  auto state = decode_state(c.kv_.peek(state_key("job")).value());
  ASSERT_TRUE(state);
  EXPECT_EQ(state->left, (std::set<std::string>{make_node("node-c").id()}));
  auto rounds = c.form({0, 1});
  ASSERT_EQ(rounds.size(), 2U);
  EXPECT_EQ(addrs(rounds[0]), (std::vector<std::string>{"node-a", "node-b"}));
}

TEST(RdzvHandler, LeavingWhileJoiningEndsTheJoinWithoutAnEntryLeft) {
  Cluster c;
  c.add(make_node("node-a"), fast_settings(3, 3));
  c.add(make_node("node-b"), fast_settings(3, 3));
  auto joins = c.next_rounds({0, 1});
  ASSERT_TRUE(run_until(c.ctx_, [&] {
    auto raw = c.kv_.peek(state_key("job"));
    auto state = raw ? decode_state(*raw) : Result<RdzvState>(RdzvState{});
    return state && state->participants.size() == 2;
  }));
  auto left = start(c.ctx_, c.agents_[1]->leave(2s));
  ASSERT_TRUE(c.wait_for(left));
  ASSERT_TRUE(left->value()) << left->value().error().message;
  ASSERT_TRUE(c.wait_for(joins[1]));
  ASSERT_FALSE(joins[1]->value());
  EXPECT_THAT(joins[1]->value().error().message, HasSubstr("leaving"));
  auto state = decode_state(c.kv_.peek(state_key("job")).value());
  ASSERT_TRUE(state);
  EXPECT_EQ(state->participants.count(make_node("node-b").id()), 0U);
  EXPECT_EQ(state->participants.count(make_node("node-a").id()), 1U);
  EXPECT_FALSE(joins[0]->has_value()) << "node-a still waits for a third node";
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

TEST(RdzvHandler, CorruptStateIsReported) {
  Cluster c;
  c.add(make_node("node-a"), fast_settings(1, 1));
  c.kv_.poke(state_key("job"), "Y2FuaW1hZGFt");
  auto slots = c.next_rounds({0});
  ASSERT_TRUE(c.wait_for(slots[0]));
  ASSERT_FALSE(slots[0]->value());
  EXPECT_EQ(slots[0]->value().error().code, ErrorCode::protocol);
}

}  // namespace
}  // namespace ddprun::rdzv
