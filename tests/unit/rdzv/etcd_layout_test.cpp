#include "ddprun/rdzv/etcd_layout.hpp"

#include "ddprun/rdzv/members.hpp"
#include "ddprun/rdzv/stall_figures.hpp"
#include "ddprun/rdzv/state.hpp"

#include <gtest/gtest.h>

namespace ddprun::rdzv {
namespace {

TEST(EtcdLayout, KeysOfARunAndItsGenerations) {
  const auto run = etcd_run_prefix("/ddprun/rdzv", "job42");
  EXPECT_EQ(run, "/ddprun/rdzv/job42/");
  EXPECT_EQ(etcd_generation_key(run), "/ddprun/rdzv/job42/run");
  EXPECT_EQ(etcd_generation_prefix(run, 3), "/ddprun/rdzv/job42/g3/");
  EXPECT_EQ(etcd_alive_prefix(etcd_generation_prefix(run, 3)), "/ddprun/rdzv/job42/g3/alive/");
}

TEST(EtcdLayout, AGenerationKeyNamesAPositiveInteger) {
  EXPECT_EQ(parse_generation("1"), 1);
  EXPECT_EQ(parse_generation("42"), 42);
  EXPECT_EQ(parse_generation(""), std::nullopt);
  EXPECT_EQ(parse_generation("0"), std::nullopt);
  EXPECT_EQ(parse_generation("-3"), std::nullopt);
  EXPECT_EQ(parse_generation("g2"), std::nullopt);
}

TEST(EtcdLayout, OnlyANodesOwnKeysCarryItsLease) {
  EXPECT_TRUE(is_node_own_key("j", heartbeat_key("j", "a_1_0")));
  EXPECT_TRUE(is_node_own_key("j", progress_key("j", "a_1_0")));
  EXPECT_TRUE(is_node_own_key("j", node_stall_key("j", "a_1_0")));
  EXPECT_TRUE(is_node_own_key("j", slot_key("j", 12, 3)));
  EXPECT_FALSE(is_node_own_key("j", state_key("j")));
  EXPECT_FALSE(is_node_own_key("j", slots_key("j", 12)));
  EXPECT_FALSE(is_node_own_key("j", rank_key("j", 12, 3)));
  EXPECT_FALSE(is_node_own_key("j", members_key("j", 12, 0)));
  EXPECT_FALSE(is_node_own_key("j", gone_key("j", 12)));
  EXPECT_FALSE(is_node_own_key("j", stacks_request_key("j", 2)));
  EXPECT_FALSE(is_node_own_key("j", round_stall_key("j", 2)));  // the round's, not one node's
  EXPECT_FALSE(is_node_own_key("other", heartbeat_key("j", "a_1_0")));
}

TEST(EtcdLayout, AStaleGenerationIsNeverJoined) {
  EXPECT_EQ(decide_generation({}).generation, 1);
  EXPECT_TRUE(decide_generation({}).start_new);
  auto running = decide_generation({4, false, true});
  EXPECT_EQ(running.generation, 4);
  EXPECT_FALSE(running.start_new);
  auto crashed = decide_generation({4, false, false});  // every lease expired
  EXPECT_EQ(crashed.generation, 5);
  EXPECT_TRUE(crashed.start_new);
  auto finished = decide_generation({4, true, true});  // closed, agents still leaving
  EXPECT_EQ(finished.generation, 5);
  EXPECT_TRUE(finished.start_new);
  EXPECT_FALSE(should_delete_previous({4, true, true}));
  EXPECT_TRUE(should_delete_previous({4, false, false}));
  // Crashed less than a lease TTL ago: leases live, no keep-alive for the bound.
  auto silent = decide_generation({4, false, true, true});
  EXPECT_EQ(silent.generation, 5);
  EXPECT_TRUE(silent.start_new);
  EXPECT_TRUE(should_delete_previous({4, false, true, true}));
  EXPECT_FALSE(should_delete_previous({}));
}

TEST(EtcdLayout, OnlyTheLeftOutNodesOfAJobThatDidNotEndCarryOver) {
  RoundHeader before;
  before.round = 3;
  before.phase = Phase::complete;
  before.members = 2;
  before.failures = 2;
  EXPECT_FALSE(carried_header(before)) << "nothing left out: the next generation starts bare";
  before.excluded.push_back(Exclusion{"10.0.0.2_77_0", 1, 2, "exitcode 1"});
  auto next = carried_header(before);
  ASSERT_TRUE(next);
  RoundHeader expected;  // round 0, joining: what a generation without a header reads as
  expected.excluded = before.excluded;
  EXPECT_EQ(*next, expected);
  before.closed = true;  // the job ended: a new job under the same id starts clean
  EXPECT_FALSE(carried_header(before));
}

}  // namespace
}  // namespace ddprun::rdzv

namespace ddprun::rdzv {
namespace {

TEST(EtcdLayout, TheLeaseLastsTheKeepAliveBoundInWholeSecondsAtLeastThree) {
  using namespace std::chrono_literals;
  RdzvSettings s;
  s.keep_alive_interval = 5s;
  s.keep_alive_max_attempt = 3;
  EXPECT_EQ(lease_ttl(s), 15s);
  s.keep_alive_interval = 1500ms;
  EXPECT_EQ(lease_ttl(s), 5s) << "4.5 s rounds up";
  s.keep_alive_interval = 200ms;
  EXPECT_EQ(lease_ttl(s), 3s) << "0.6 s: the floor";
}

TEST(EtcdLayout, RetriesPauseLongerEachTimeUpTo8sSpreadAtRandom) {
  using namespace std::chrono_literals;
  EXPECT_EQ(etcd_retry_pause(0, 1.0), 500ms);
  EXPECT_EQ(etcd_retry_pause(1, 1.0), 1000ms);
  EXPECT_EQ(etcd_retry_pause(4, 1.0), 8000ms);
  EXPECT_EQ(etcd_retry_pause(40, 1.0), 8000ms) << "the cap";
  EXPECT_EQ(etcd_retry_pause(0, 0.5), 250ms);
  EXPECT_EQ(etcd_retry_pause(2, 1.4), 2800ms);
  EXPECT_EQ(etcd_retry_pause(0, 3.0), 750ms) << "spread is clamped to [0.5, 1.5]";
}

}  // namespace
}  // namespace ddprun::rdzv
