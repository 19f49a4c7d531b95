// --stall-timeout auto over DynamicRendezvous: each member's figures ride on its keep-alive,
// the round's key holds their maximum, and every member adopts it.

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

/// One member's side: what it says it learned, and what it was told.
struct Member {
  NodeStall mine;
  std::optional<StallFigures> adopted;
  StallShare share() {
    return StallShare{[this]() -> std::optional<NodeStall> { return mine; },
                      [this](const StallFigures& job) { adopted = job; }};
  }
};

TEST(RdzvStallShare, MembersAdoptTheRoundsMaximumOfEveryFigure) {
  Cluster c;
  Member a{NodeStall{300s, StallFigures{40s, 58s, 2h}}, std::nullopt};
  Member b{NodeStall{60s, StallFigures{90s, 8s, 3h}}, std::nullopt};
  for (const char* addr : {"node-a", "node-b"}) {
    c.add(make_node(addr), fast_settings(2, 2));
  }
  c.agents_[0]->keep_alive().set_stall_share(a.share());
  c.agents_[1]->keep_alive().set_stall_share(b.share());
  ASSERT_EQ(c.form({0, 1}).size(), 2U);
  const StallFigures job{90s, 58s, 3h};
  ASSERT_TRUE(run_until(c.ctx_, [&] { return a.adopted == job && b.adopted == job; }))
      << "a adopted " << (a.adopted ? encode_stall_figures(*a.adopted) : "nothing") << ", b "
      << (b.adopted ? encode_stall_figures(*b.adopted) : "nothing");
  const auto round = c.kv_.peek(round_stall_key("job", 0));
  ASSERT_TRUE(round.has_value());
  EXPECT_EQ(decode_stall_figures(*round), job);
  const auto own = c.kv_.peek(node_stall_key("job", make_node("node-b").id()));
  ASSERT_TRUE(own.has_value());
  const auto parsed = decode_node_stall(*own);
  ASSERT_TRUE(parsed.has_value()) << *own;
  EXPECT_EQ(parsed->timeout, 60s) << "each node's own key holds its own timeout";
  EXPECT_EQ(parsed->figures, b.mine.figures);
}

TEST(RdzvStallShare, ANodeThatIsNotLearningWritesNothing) {
  Cluster c;
  c.add(make_node("node-a"), fast_settings(1, 1));
  bool adopted = false;
  c.agents_[0]->keep_alive().set_stall_share(StallShare{
      [] { return std::optional<NodeStall>(); }, [&](const StallFigures&) { adopted = true; }});
  std::optional<WallMs> progress = 1;
  c.agents_[0]->keep_alive().set_progress_source([&] { return progress; });
  ASSERT_EQ(c.form({0}).size(), 1U);
  const std::string beat = progress_key("job", make_node("node-a").id());
  ASSERT_TRUE(run_until(c.ctx_, [&] { return c.kv_.peek(beat).has_value(); }));
  ASSERT_TRUE(run_until(c.ctx_, [&] { return c.kv_.peek(beat) == "1"; }));
  progress = 2;  // one more keep-alive
  ASSERT_TRUE(run_until(c.ctx_, [&] { return c.kv_.peek(beat) == "2"; }));
  EXPECT_FALSE(c.kv_.peek(node_stall_key("job", make_node("node-a").id())).has_value());
  EXPECT_FALSE(c.kv_.peek(round_stall_key("job", 0)).has_value());
  EXPECT_FALSE(adopted);
}

}  // namespace
}  // namespace ddprun::rdzv
