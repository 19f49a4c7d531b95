#include "ddprun/rdzv/crash_loop.hpp"

#include "ddprun/rdzv/decide.hpp"

#include <gtest/gtest.h>

#include "fixtures.hpp"

namespace ddprun::rdzv {
namespace {

using test::complete;
using test::node;

const NodeDesc a = node("10.0.0.1");
const NodeDesc b = node("10.0.0.2");
const std::string bad_value = "rank 1: exitcode 1: ValueError: bad value";

FailedRound failure(int round, const NodeDesc& by, const std::string& signature, bool quick,
                    WallMs at = 100) {
  return FailedRound{round, by.id(), at, "rank 1 failed (exitcode: 1)", signature, quick};
}

/// Fails rounds 0..n-1 in turn as `f(round)` says, the header moving on between them.
template <typename F>
RoundHeader fail_rounds(int n, F f) {
  RoundHeader h = complete(0, 2);
  for (int r = 0; r < n; ++r) {
    h = *with_failure(h, f(r));
    h = *with_next_round(h, r, Phase::complete, {}, {});
    h.phase = Phase::complete;
  }
  return h;
}

RdzvSettings limit(int k) {
  RdzvSettings s = test::settings(1, 2);
  s.crash_loop_limit = k;
  return s;
}

TEST(CrashLoop, TheSameQuickFailureLengthensTheStreak) {
  CrashStreak s;
  s = next_streak(s, failure(0, a, bad_value, true));
  EXPECT_EQ(s, (CrashStreak{bad_value, 1}));
  s = next_streak(s, failure(1, a, bad_value, true));
  EXPECT_EQ(s, (CrashStreak{bad_value, 2}));
  s = next_streak(s, failure(2, b, "rank 3: SIGSEGV", true));
  EXPECT_EQ(s, (CrashStreak{"rank 3: SIGSEGV", 1})) << "another failure starts over";
  s = next_streak(s, failure(3, b, "rank 3: SIGSEGV", false));
  EXPECT_EQ(s, (CrashStreak{"rank 3: SIGSEGV", 0})) << "an attempt that made progress ends it";
  s = next_streak(s, failure(4, b, "rank 3: SIGSEGV", true));
  EXPECT_EQ(s.count, 1) << "after progress the same failure counts from one";
}

TEST(CrashLoop, LimitZeroNeverStops) {
  EXPECT_FALSE(is_crash_loop(CrashStreak{bad_value, 100}, 0));
  EXPECT_FALSE(is_crash_loop(CrashStreak{bad_value, 2}, 3));
  EXPECT_TRUE(is_crash_loop(CrashStreak{bad_value, 3}, 3));
}

TEST(CrashLoop, TheHeaderCountsFailedRoundsAndTheStreak) {
  const RoundHeader h = fail_rounds(3, [](int r) { return failure(r, a, bad_value, true); });
  EXPECT_EQ(h.failures, 3);
  EXPECT_EQ(h.streak, (CrashStreak{bad_value, 3, 100})) << "the third failure's time";
  EXPECT_EQ(h.streak_before, (CrashStreak{bad_value, 2}));
}

TEST(CrashLoop, AnEarlierReportOfTheSameRoundReplacesItsPlaceInTheStreak) {
  RoundHeader h = fail_rounds(2, [](int r) { return failure(r, a, bad_value, true); });
  h = *with_failure(h, failure(2, b, "rank 9: exitcode 1: gloo: connection closed", true, 200));
  EXPECT_EQ(h.streak.count, 1) << "b's failure, a consequence, was reported first";
  auto root = with_failure(h, failure(2, a, bad_value, true, 150));
  ASSERT_TRUE(root);
  EXPECT_EQ(root->streak, (CrashStreak{bad_value, 3, 150})) << "a's came first: the streak goes on";
  EXPECT_EQ(root->failures, 3) << "one round, one failure";
}

TEST(CrashLoop, MembershipRoundsInBetweenDoNotBreakTheStreak) {
  RoundHeader h = fail_rounds(2, [](int r) { return failure(r, a, bad_value, true); });
  h = *with_next_round(h, h.round, Phase::complete, {}, {});  // a node joined: a free restart
  h.phase = Phase::complete;
  h = *with_failure(h, failure(h.round, a, bad_value, true));
  EXPECT_EQ(h.streak.count, 3);
  EXPECT_EQ(h.failures, 3);
}

TEST(CrashLoop, TheStopClosesTheRunWithTheReason) {
  const RoundHeader h = fail_rounds(3, [](int r) { return failure(r, a, bad_value, true); });
  EXPECT_FALSE(with_crash_loop_stop(h, limit(4)));
  EXPECT_FALSE(with_crash_loop_stop(h, limit(0)));
  auto stopped = with_crash_loop_stop(h, limit(3));
  ASSERT_TRUE(stopped);
  EXPECT_TRUE(stopped->closed);
  EXPECT_EQ(stopped->stop_reason,
            "the last 3 attempts failed the same way within 300 s of their start (" + bad_value +
                "): restarting would not help (--crash-loop-limit 3)");
  EXPECT_FALSE(with_crash_loop_stop(*stopped, limit(3))) << "closed already";
}

TEST(CrashLoop, TheStreakKeepsWhenTheHintedLimitWasReached) {
  CrashStreak s;
  for (int r = 0; r < 5; ++r) {
    s = next_streak(s, failure(r, a, bad_value, true, 1000 * (r + 1)));
  }
  EXPECT_EQ(s, (CrashStreak{bad_value, 5, 3000})) << "the third failure, at 3 s";
  s = next_streak(s, failure(5, a, "rank 0: SIGKILL", true, 6000));
  EXPECT_EQ(s, (CrashStreak{"rank 0: SIGKILL", 1})) << "a new streak has not reached it";
}

TEST(CrashLoop, WhileTheStopIsOffAStreakOfThreeIsNamedWithTheTimeTheStopWouldHaveSaved) {
  const CrashStreak two{bad_value, 2};
  const CrashStreak five{bad_value, 5, 3000};
  EXPECT_FALSE(render_crash_loop_hint(two, limit(0), 9000)) << "two failures are no streak yet";
  EXPECT_FALSE(render_crash_loop_hint(five, limit(3), 9000)) << "the stop is on: it decides";
  EXPECT_FALSE(render_crash_loop_hint(five, limit(10), 9000)) << "a limit the user chose";
  EXPECT_EQ(render_crash_loop_hint(five, limit(0), 45'000),
            "the last 5 attempts failed the same way within 300 s of their start (" + bad_value +
                "); --crash-loop-limit 3 would have stopped the job after 3 of them with exit "
                "status 3 (do not requeue), 42 s ago (the stop is off by default, as in torchrun)");
}

TEST(CrashLoop, TheHintedTimeTravelsInTheHeader) {
  RoundHeader h = fail_rounds(3, [](int r) { return failure(r, a, bad_value, true, 7000 + r); });
  auto back = decode_header(encode_header(h));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->streak.hinted_stop_at, 7002);
}

}  // namespace
}  // namespace ddprun::rdzv
