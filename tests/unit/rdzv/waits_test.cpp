#include "ddprun/rdzv/waits.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"

namespace ddprun::rdzv {
namespace {

using namespace std::chrono_literals;
using test::settings;

TEST(Waits, WatchPollsAStoreThatCannotWatchWithinItsLookBudget) {
  const auto s = settings(2, 3);  // watch 250 ms, keep-alive 5 s
  for (bool first : {false, true}) {
    for (bool failing : {false, true}) {
      EXPECT_EQ(watch_wait(s, false, first, failing, 3, std::nullopt), 250ms);
    }
  }
  EXPECT_EQ(store_poll_interval(s, 2000), 250ms) << "2000 nodes: 8000 looks a second";
  EXPECT_EQ(store_poll_interval(s, 4096), 512ms);
  EXPECT_EQ(store_poll_interval(s, 16384), 2048ms);
  EXPECT_EQ(watch_wait(s, false, false, true, 16384, std::nullopt), 2048ms)
      << "also while it fails";
}

TEST(Waits, WatchFallsBackToTheRingCadenceOnAStoreThatWatches) {
  const auto s = settings(2, 3);
  EXPECT_EQ(watch_wait(s, true, false, false, 3, std::nullopt), 5000ms);
  EXPECT_EQ(watch_wait(s, true, true, false, 3, std::nullopt), 250ms)
      << "the first look, as before";
  EXPECT_EQ(watch_wait(s, true, false, true, 3, std::nullopt), 250ms)
      << "a failing store is polled";
  auto fast = s;
  fast.keep_alive_interval = 100ms;
  EXPECT_EQ(watch_wait(fast, true, false, false, 3, std::nullopt), 250ms)
      << "never faster than the poll";
}

TEST(Waits, OnAStoreThatWatchesTheNextLookIsWhenTheWatchedHeartbeatWouldTurnSilent) {
  const auto s = settings(2, 3);  // bound 15 s
  EXPECT_EQ(watch_wait(s, true, false, false, 3, 11'000ms), 11'001ms);
  EXPECT_EQ(watch_wait(s, true, false, false, 3, 14'999ms), 15'000ms);
  EXPECT_EQ(watch_wait(s, true, false, false, 3, 40'000ms), 15'000ms)
      << "a heartbeat from the future (a clock ahead): at most the bound";
  EXPECT_EQ(watch_wait(s, true, false, false, 3, 100ms), 250ms) << "never faster than the poll";
  EXPECT_EQ(watch_wait(s, true, false, false, 3, -3'000ms), 250ms);
  EXPECT_EQ(watch_wait(s, true, true, false, 3, 11'000ms), 250ms) << "the first look, as before";
  EXPECT_EQ(watch_wait(s, true, false, true, 3, 11'000ms), 250ms) << "a failing store is polled";
  EXPECT_EQ(watch_wait(s, false, false, false, 3, 11'000ms), 250ms) << "c10d polls as before";
}

TEST(Waits, JoinWaitsStretchOnlyOnAStoreThatWatchesAndNotPastTheDeadline) {
  const auto s = settings(2, 3);
  JoinView v;
  v.now = 10'000;
  v.join_deadline = 100'000;
  EXPECT_EQ(join_wait_until(10'150, v, s, false), 10'150);
  EXPECT_EQ(join_wait_until(10'150, v, s, true), 15'000);
  v.join_deadline = 12'000;
  EXPECT_EQ(join_wait_until(10'150, v, s, true), 12'001);
  v.join_deadline = 10'050;
  EXPECT_EQ(join_wait_until(10'150, v, s, true), 10'150) << "never shorter than decided";
}

TEST(Waits, BarrierWaitsThePollOrTheRingCadenceBoundedByItsEnd) {
  const auto s = settings(2, 3);
  EXPECT_EQ(barrier_wait(s, false, 10ms), 150ms) << "c10d: as before, whatever is left";
  EXPECT_EQ(barrier_wait(s, true, 60'000ms), 5000ms);
  EXPECT_EQ(barrier_wait(s, true, 700ms), 700ms);
  EXPECT_EQ(barrier_wait(s, true, -5ms), 1ms);
}

}  // namespace
}  // namespace ddprun::rdzv
