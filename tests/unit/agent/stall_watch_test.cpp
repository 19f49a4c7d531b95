#include "ddprun/agent/stall_watch.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace ddprun::agent {
namespace {

using namespace std::chrono_literals;

/// A clock the test moves.
class ManualClock final : public util::Clock {
 public:
  util::SteadyTime now() const override { return t; }
  std::chrono::system_clock::time_point wall_now() const override {
    return std::chrono::system_clock::time_point(t.time_since_epoch());
  }
  util::SteadyTime t{1h};
};

TEST(StallWatch, AFixedTimeoutCountsFromTheLatestOfTheStartAndTheLastProgress) {
  ManualClock clock;
  config::SupervisorOptions options;
  options.stall_timeout = 10s;
  StallWatch watch(options, "default", clock, {});
  const auto t0 = clock.t;
  watch.round_started(t0);
  const GroupProgress p{true, t0, t0 + 3s};
  EXPECT_EQ(watch.deadline(p), t0 + 13s);
  EXPECT_EQ(watch.wake_deadline(p), t0 + 13s) << "no samples without auto";
  EXPECT_EQ(watch.deadline(GroupProgress{false, t0, t0 + 3s}), util::SteadyTime::max())
      << "no worker watched: no deadline";
  EXPECT_EQ(watch.deadline(GroupProgress{true, t0, {}}), t0 + 10s) << "no progress yet";
  clock.t = t0 + 12s;
  EXPECT_FALSE(watch.check(p));
  EXPECT_EQ(watch.reason(), "");
  clock.t = t0 + 13s;
  EXPECT_TRUE(watch.check(p));
  EXPECT_EQ(watch.reason(),
            "worker group stalled: no output and no file-timer request for 10 s (--stall-timeout)");
  EXPECT_EQ(watch.stalled_at(), clock.wall_now());
  watch.round_started(clock.t);
  EXPECT_EQ(watch.reason(), "") << "a new round's group has not stalled";
}

TEST(StallWatch, OffNeverStalls) {
  ManualClock clock;
  config::SupervisorOptions options;  // stall_timeout 0
  StallWatch watch(options, "default", clock, {});
  watch.round_started(clock.t);
  EXPECT_EQ(watch.deadline(GroupProgress{true, clock.t, clock.t}), util::SteadyTime::max());
  clock.t += 24h;
  EXPECT_FALSE(watch.check(GroupProgress{true, clock.t - 24h, {}}));
  EXPECT_FALSE(watch.figures());
}

TEST(StallWatch, AutoStartsAtTheStartupBoundWakesForSamplesAndTellsTheChange) {
  ManualClock clock;
  config::SupervisorOptions options;
  options.stall_auto = config::StallAuto{5.0, 600s, 60s};
  options.stall_timeout = 600s;
  std::vector<std::chrono::milliseconds> told;
  StallWatch watch(options, "default", clock,
                   [&](std::chrono::milliseconds v, const std::string&) { told.push_back(v); });
  const auto t0 = clock.t;
  watch.round_started(t0);
  EXPECT_EQ(watch.timeout(), 600s);
  ASSERT_EQ(told, std::vector<std::chrono::milliseconds>{600s}) << "the first value is told";
  const GroupProgress p{true, t0, {}};
  EXPECT_EQ(watch.deadline(p), t0 + 600s);
  EXPECT_LT(watch.wake_deadline(p), watch.deadline(p)) << "it wakes to sample";
  ASSERT_TRUE(watch.figures());
  clock.t = t0 + 1s;
  EXPECT_FALSE(watch.check(p));
  EXPECT_EQ(told.size(), 1U) << "an unchanged timeout is not told again";
}

}  // namespace
}  // namespace ddprun::agent
