// Many agents running the pure join algorithm against one shared state with optimistic
// concurrency (each decides on its last read and writes only if nobody wrote meanwhile), in a
// seeded random order and on simulated time. No I/O, no clock.

#include "ddprun/rdzv/decide.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "unit/rdzv/fixtures.hpp"

namespace ddprun::rdzv {
namespace {

constexpr WallMs k_start = 5'000'000;
constexpr WallMs k_step_ms = 10;
constexpr int k_max_steps = 200'000;

struct Agent {
  NodeDesc node;
  RdzvState seen;  ///< last read: the fencing token
  bool done = false;
};

/// Runs every agent's join to completion; returns the final shared state.
RdzvState simulate(std::vector<Agent>& agents, const RdzvSettings& settings, unsigned seed) {
  std::mt19937 rng(seed);
  RdzvState shared;
  WallMs now = k_start;
  const WallMs deadline = k_start + settings.join_timeout.count();
  for (int step = 0; step < k_max_steps; ++step) {
    auto& a = agents[rng() % agents.size()];
    now += k_step_ms;
    if (a.done) {
      continue;
    }
    auto clean = sanitize(a.seen, now, settings).state;
    Action act = decide_join(clean, a.node, now, deadline, settings);
    EXPECT_NE(act, Action::error_timeout) << a.node.id();
    EXPECT_NE(act, Action::error_closed) << a.node.id();
    if (act == Action::done) {
      a.done = true;
    } else if (act != Action::wait && a.seen == shared) {
      shared = apply(act, clean, a.node, now, settings);  // compare-and-set won
    }
    a.seen = shared;  // a lost write, or a wait, re-reads
    if (std::all_of(agents.begin(), agents.end(), [](const Agent& x) { return x.done; })) {
      return shared;
    }
  }
  ADD_FAILURE() << "agents did not finish within " << k_max_steps << " steps";
  return shared;
}

void expect_one_round_with_unique_ranks(const RdzvState& s, std::size_t n) {
  EXPECT_TRUE(s.complete);
  ASSERT_EQ(s.participants.size(), n);
  std::set<int> ranks;
  for (const auto& [id, p] : s.participants) {
    ranks.insert(p.rank);
  }
  EXPECT_EQ(ranks.size(), n);
  EXPECT_EQ(*ranks.begin(), 0);
  EXPECT_EQ(*ranks.rbegin(), static_cast<int>(n) - 1);
}

TEST(RdzvSimulation, RacingAgentsFormOneRoundAtMax) {
  for (unsigned seed = 1; seed <= 50; ++seed) {
    std::vector<Agent> agents;
    for (int i = 0; i < 5; ++i) {
      agents.push_back(Agent{test::node("n" + std::to_string(i)), {}, false});
    }
    auto final_state = simulate(agents, test::settings(5, 5), seed);
    expect_one_round_with_unique_ranks(final_state, 5);
    EXPECT_EQ(final_state.round, 0) << "seed " << seed;
  }
}

TEST(RdzvSimulation, ElasticRoundClosesAfterLastCall) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    std::vector<Agent> agents;
    for (int i = 0; i < 3; ++i) {
      agents.push_back(Agent{test::node("n" + std::to_string(i)), {}, false});
    }
    auto settings = test::settings(2, 8);
    settings.last_call_timeout = std::chrono::seconds(1);
    auto final_state = simulate(agents, settings, seed);
    expect_one_round_with_unique_ranks(final_state, 3);
  }
}

}  // namespace
}  // namespace ddprun::rdzv
