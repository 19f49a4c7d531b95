// The job-wide stacks request over DynamicRendezvous: asking, being asked through watch(),
// answering, collecting; and the workers' progress riding on the heartbeats.

#include "ddprun/rdzv/dynamic_rendezvous.hpp"

#include <gtest/gtest.h>

#include "component/rdzv/harness.hpp"

namespace ddprun::rdzv {
namespace {

using namespace std::chrono_literals;
using test::Cluster;
using test::fast_settings;
using test::make_node;
using test::run_until;
using test::Slot;
using test::start;

/// node-a, node-b, node-c (group ranks 0, 1, 2) in a formed round.
void form_three(Cluster& c) {
  for (const char* addr : {"node-a", "node-b", "node-c"}) {
    c.add(make_node(addr), fast_settings(3, 3));
  }
  ASSERT_EQ(c.form({0, 1, 2}).size(), 3U);
}

Result<StacksRequest> request(Cluster& c, std::size_t who, const std::string& reason,
                              std::chrono::milliseconds collect_for = 2s) {
  auto asked = start(c.ctx_, c.agents_.at(who)->stacks().request(reason, collect_for));
  EXPECT_TRUE(c.wait_for(asked));
  return asked->value_or(make_error(ErrorCode::internal, "request_stacks did not finish"));
}

void publish(Cluster& c, std::size_t who, const std::string& summary) {
  auto done = start(c.ctx_, c.agents_.at(who)->stacks().publish(summary));
  ASSERT_TRUE(c.wait_for(done));
  ASSERT_TRUE(done->value()) << done->value().error().message;
}

StacksGathered collect(Cluster& c, std::size_t who, std::chrono::milliseconds bound) {
  auto got = start(c.ctx_, c.agents_.at(who)->stacks().collect(bound));
  EXPECT_TRUE(c.wait_for(got));
  return got->value_or(StacksGathered{});
}

TEST(RdzvStacks, EveryOtherNodeIsAskedOnceAndTheRequesterCollectsAllAnswers) {
  Cluster c;
  form_three(c);
  auto watch_a = c.watch(0);
  auto watch_b = c.watch(1);
  auto watch_c = c.watch(2);
  auto asked = request(c, 0, "no worker output for 300s");
  ASSERT_TRUE(asked) << asked.error().message;
  EXPECT_EQ(asked->requester, make_node("node-a").id());
  EXPECT_EQ(asked->seq, 1);
  ASSERT_TRUE(c.wait_for(watch_b));
  ASSERT_TRUE(c.wait_for(watch_c));
  EXPECT_EQ(**watch_b, RunSignal::stacks_requested);
  EXPECT_EQ(**watch_c, RunSignal::stacks_requested);
  for (std::size_t i : {1U, 2U}) {
    const auto& r = c.agents_[i]->stacks().last_request();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->requester, make_node("node-a").id());
    EXPECT_EQ(r->requester_rank, 0);
    EXPECT_EQ(r->reason, "no worker output for 300s");
  }
  publish(c, 1, "answer of b");
  publish(c, 2, "answer of c");
  const auto got = collect(c, 0, 2s);
  EXPECT_EQ(got.error, "");
  ASSERT_EQ(got.answers.size(), 2U);
  EXPECT_EQ(got.answers[0].group_rank, 1);
  EXPECT_EQ(got.answers[0].summary, "answer of b");
  EXPECT_EQ(got.answers[1].group_rank, 2);
  EXPECT_EQ(got.answers[1].summary, "answer of c");
  EXPECT_TRUE(got.missing.empty());
  EXPECT_TRUE(got.missing_names.empty());
  EXPECT_FALSE(watch_a->has_value());  // the requester is never asked
}

TEST(RdzvStacks, AnAnsweredNodeWatchesOnAndStillSeesAPeerFailure) {
  Cluster c;
  form_three(c);
  auto watch_b = c.watch(1);
  ASSERT_TRUE(request(c, 0, "timer expired"));
  ASSERT_TRUE(c.wait_for(watch_b));
  ASSERT_EQ(**watch_b, RunSignal::stacks_requested);
  publish(c, 1, "b");
  watch_b = c.watch(1);
  EXPECT_FALSE(run_until(
      c.ctx_, [&] { return watch_b->has_value(); }, 300ms));
  auto reported =
      start(c.ctx_, c.agents_[2]->report_failure(FailedRound{0, "", 1, "rank 0 failed"}));
  ASSERT_TRUE(c.wait_for(reported));
  ASSERT_TRUE(c.wait_for(watch_b));
  EXPECT_EQ(**watch_b, RunSignal::peer_failed);
}

TEST(RdzvStacks, ANodeThatNeverAnswersIsNamedMissingAfterTheBound) {
  Cluster c;
  form_three(c);
  auto watch_b = c.watch(1);
  ASSERT_TRUE(request(c, 0, "stall", 400ms));
  ASSERT_TRUE(c.wait_for(watch_b));
  publish(c, 1, "b");  // node-c never answers
  const auto began = std::chrono::steady_clock::now();
  const auto got = collect(c, 0, 400ms);
  EXPECT_GE(std::chrono::steady_clock::now() - began, 380ms);  // wall ms vs steady ns
  ASSERT_EQ(got.answers.size(), 1U);
  EXPECT_EQ(got.answers[0].group_rank, 1);
  EXPECT_EQ(got.missing, std::vector<int>{2});
  EXPECT_EQ(got.missing_names, std::vector<std::string>{"node-c"});
}

TEST(RdzvStacks, ARequestOfAnEarlierRoundIsNotSeenInTheNextRound) {
  Cluster c;
  form_three(c);
  ASSERT_TRUE(request(c, 0, "stall in round 0"));
  auto reported =
      start(c.ctx_, c.agents_[0]->report_failure(FailedRound{0, "", 1, "rank 0 failed"}));
  ASSERT_TRUE(c.wait_for(reported));
  const auto rounds = c.form({0, 1, 2});
  ASSERT_EQ(rounds.size(), 3U);
  ASSERT_EQ(rounds[1].round, 1);
  auto watch_b = c.watch(1);
  EXPECT_FALSE(run_until(
      c.ctx_, [&] { return watch_b->has_value(); }, 300ms));
  // ... while a request of the new round is.
  ASSERT_TRUE(request(c, 2, "stall in round 1"));
  ASSERT_TRUE(c.wait_for(watch_b));
  EXPECT_EQ(**watch_b, RunSignal::stacks_requested);
  EXPECT_EQ(c.agents_[1]->stacks().last_request()->reason, "stall in round 1");
}

TEST(RdzvStacks, ASecondAskerWhileOneCollectsAnswersThatRequestInstead) {
  Cluster c;
  form_three(c);
  ASSERT_TRUE(request(c, 0, "a stalled"));
  auto watch_b = c.watch(1);
  auto second = request(c, 1, "b stalled");
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(second->requester, make_node("node-a").id());
  EXPECT_EQ(second->reason, "a stalled");
  publish(c, 1, "b");
  EXPECT_FALSE(run_until(
      c.ctx_, [&] { return watch_b->has_value(); }, 300ms));  // already answered
  auto watch_c = c.watch(2);
  ASSERT_TRUE(c.wait_for(watch_c));
  publish(c, 2, "c");
  EXPECT_EQ(collect(c, 0, 1s).answers.size(), 2U);
}

TEST(RdzvStacks, ALaterRequestOfTheSameRoundTakesTheNextSeqAndAsksAgain) {
  Cluster c;
  form_three(c);
  ASSERT_TRUE(request(c, 0, "first", 50ms));
  auto watch_c = c.watch(2);
  ASSERT_TRUE(c.wait_for(watch_c));
  publish(c, 2, "c1");
  run_until(
      c.ctx_, [] { return false; }, 100ms);  // the first request's collection ended
  auto again = request(c, 1, "second");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->seq, 2);
  EXPECT_EQ(again->requester_rank, 1);
  watch_c = c.watch(2);
  ASSERT_TRUE(c.wait_for(watch_c));
  EXPECT_EQ(**watch_c, RunSignal::stacks_requested);
  publish(c, 2, "c2");
  const auto got = collect(c, 1, 300ms);
  ASSERT_EQ(got.answers.size(), 1U);  // node-a did not answer request 2
  EXPECT_EQ(got.answers[0].summary, "c2");
  EXPECT_EQ(got.missing, std::vector<int>{0});
  EXPECT_EQ(got.missing_names, std::vector<std::string>{"node-a"});
}

// Above k_max_named_ids members a node holds no members list: the names of the nodes that did
// not answer come from the round's members key, read once at the end.
TEST(RdzvStacks, ALargeRoundNamesItsSilentNodesFromTheMembersKey) {
  constexpr int k_nodes = 40;
  Cluster c;
  std::vector<std::size_t> all;
  for (int i = 0; i < k_nodes; ++i) {
    c.add(make_node("node-" + std::to_string(100 + i)), fast_settings(k_nodes, k_nodes));
    all.push_back(static_cast<std::size_t>(i));
  }
  const auto rounds = c.form(all);
  ASSERT_EQ(rounds.size(), static_cast<std::size_t>(k_nodes));
  ASSERT_TRUE(rounds[0].members.empty());
  ASSERT_EQ(rounds[0].group_rank(), 0);  // node-100
  std::vector<Slot<RunSignal>> watches;
  for (std::size_t i = 1; i < all.size(); ++i) {
    watches.push_back(c.watch(i));
  }
  ASSERT_TRUE(request(c, 0, "stall", 1s));
  ASSERT_TRUE(run_until(c.ctx_, [&] { return test::all_done(watches); }));
  for (std::size_t i = 1; i < all.size(); ++i) {
    EXPECT_EQ(**watches[i - 1], RunSignal::stacks_requested);
    if (i != 7 && i != 30) {
      publish(c, i, "answer " + std::to_string(i));
    }
  }
  const auto got = collect(c, 0, 300ms);
  EXPECT_EQ(got.answers.size(), static_cast<std::size_t>(k_nodes - 3));
  EXPECT_EQ(got.missing, (std::vector<int>{7, 30}));
  EXPECT_EQ(got.missing_names, (std::vector<std::string>{"node-107", "node-130"}));
}

TEST(RdzvStacks, NothingToAnswerOrCollectBeforeARequest) {
  Cluster c;
  form_three(c);
  auto published = start(c.ctx_, c.agents_[1]->stacks().publish("x"));
  ASSERT_TRUE(c.wait_for(published));
  EXPECT_FALSE(published->value());
  const auto got = collect(c, 0, 100ms);
  EXPECT_NE(got.error.find("no stacks request"), std::string::npos) << got.error;
  c.add(make_node("node-d"), fast_settings(1, 1));
  auto early = start(c.ctx_, c.agents_[3]->stacks().request("x", 1s));
  ASSERT_TRUE(c.wait_for(early));
  EXPECT_FALSE(early->value());
}

TEST(RdzvStacks, AStoreFailureWhileCollectingIsReportedWithEveryoneMissing) {
  Cluster c;
  form_three(c);
  ASSERT_TRUE(request(c, 0, "stall"));
  c.kv_.fail_all(true);
  const auto got = collect(c, 0, 200ms);
  c.kv_.fail_all(false);
  EXPECT_NE(got.error, "");
  EXPECT_EQ(got.missing, (std::vector<int>{1, 2}));
  // from the round's members, no store read
  EXPECT_EQ(got.missing_names, (std::vector<std::string>{"node-b", "node-c"}));
}

TEST(RdzvStacks, HeartbeatsCarryTheWorkersLastProgress) {
  Cluster c;
  auto settings = fast_settings(1, 1);
  c.add(make_node("node-a"), settings);
  std::optional<WallMs> progress;
  c.agents_[0]->keep_alive().set_progress_source([&] { return progress; });
  ASSERT_EQ(c.form({0}).size(), 1U);
  const std::string key = progress_key("job", make_node("node-a").id());
  ASSERT_TRUE(run_until(c.ctx_, [&] { return c.kv_.peek(key).has_value(); }));
  EXPECT_EQ(*c.kv_.peek(key), "-");
  progress = 1'700'000'000'123;
  ASSERT_TRUE(run_until(c.ctx_, [&] { return c.kv_.peek(key) == "1700000000123"; }));
  const auto beat = c.kv_.peek(heartbeat_key("job", make_node("node-a").id()));
  ASSERT_TRUE(beat.has_value());
  EXPECT_TRUE(parse_heartbeat(*beat).has_value()) << *beat;  // still plain wall ms
}

}  // namespace
}  // namespace ddprun::rdzv
