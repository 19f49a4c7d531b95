// The file-timer watchdog's pure core: request lines as torch's FileTimerClient writes them,
// and the timer table's register / release / expire / drop-pid rules (spec torchrun.md §8.3).

#include "ddprun/agent/file_timer.hpp"

#include <gtest/gtest.h>

#include <csignal>

using namespace ddprun::agent;

namespace {

TimerRequest arm(pid_t pid, const std::string& scope, double at, int sig = SIGKILL) {
  return TimerRequest{1, pid, scope, at, sig};
}

TimerRequest release(pid_t pid, const std::string& scope) {
  return TimerRequest{1, pid, scope, -1, 0};
}

}  // namespace

TEST(FileTimerRequest, ParsesTorchClientLine) {
  // json.dumps of torch 1.13's FileTimerRequest.to_json().
  auto r = parse_timer_request(R"({"version": 1, "pid": 4242, "scope_id": "train.py#12", )"
                               R"("expiration_time": 1795946171.25, "signal": 9})");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->pid, 4242);
  EXPECT_EQ(r->scope_id, "train.py#12");
  EXPECT_DOUBLE_EQ(r->expiration_time, 1795946171.25);
  EXPECT_EQ(r->signal, SIGKILL);
  EXPECT_FALSE(r->is_release());
}

TEST(FileTimerRequest, ReleaseHasIntegerNegativeExpiration) {
  auto r = parse_timer_request(
      R"({"version": 1, "pid": 7, "scope_id": "s", "expiration_time": -1, "signal": 0})");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->is_release());
}

TEST(FileTimerRequest, RejectsMalformedLinesWithTheField) {
  struct Row {
    const char* line;
    const char* says;
  };
  const Row rows[] = {
      {"not json", "not a JSON object"},
      {"[1, 2]", "not a JSON object"},
      {R"({"pid": 1, "scope_id": "s", "expiration_time": 1, "signal": 9})", "\"version\""},
      {R"({"version": 1, "pid": "1", "scope_id": "s", "expiration_time": 1, "signal": 9})",
       "\"pid\" must be an integer"},
      {R"({"version": 1, "pid": 0, "scope_id": "s", "expiration_time": 1, "signal": 9})",
       "\"pid\" is 0, expected 1.."},
      {R"({"version": 1, "pid": 1, "scope_id": 3, "expiration_time": 1, "signal": 9})",
       "\"scope_id\" must be a string"},
      {R"({"version": 1, "pid": 1, "scope_id": "s", "expiration_time": "x", "signal": 9})",
       "\"expiration_time\" must be a number"},
      {R"({"version": 1, "pid": 1, "scope_id": "s", "expiration_time": 1, "signal": 99})",
       "\"signal\" is 99"},
  };
  for (const auto& row : rows) {
    auto r = parse_timer_request(row.line);
    ASSERT_FALSE(r) << row.line;
    EXPECT_NE(r.error().message.find(row.says), std::string::npos)
        << row.line << " -> " << r.error().message;
  }
}

TEST(FileTimerRequest, RejectsOverLongLine) {
  std::string line(k_max_timer_request_bytes + 1, ' ');
  auto r = parse_timer_request(line);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("exceeds 4096"), std::string::npos) << r.error().message;
}

TEST(TimerTable, ExpiredTimerReportsItsSignalAndScopeOnce) {
  TimerTable t;
  t.apply(arm(10, "step", 100.0, SIGKILL));
  EXPECT_TRUE(t.expired(99.9).empty());
  auto fired = t.expired(100.0);
  ASSERT_EQ(fired.size(), 1U);
  EXPECT_EQ(fired[0].pid, 10);
  EXPECT_EQ(fired[0].signal, SIGKILL);
  EXPECT_EQ(fired[0].scope_id, "step");
  EXPECT_TRUE(t.expired(200.0).empty());  // the pid's timers are forgotten
  EXPECT_EQ(t.size(), 0U);
}

TEST(TimerTable, ReleasedTimerNeverFires) {
  TimerTable t;
  t.apply(arm(10, "step", 100.0));
  t.apply(release(10, "step"));
  EXPECT_TRUE(t.expired(1000.0).empty());
  EXPECT_FALSE(t.next_expiration().has_value());
}

TEST(TimerTable, RearmingTheSameScopeMovesItsExpiration) {
  TimerTable t;
  t.apply(arm(10, "step", 100.0));
  t.apply(arm(10, "step", 300.0));
  EXPECT_TRUE(t.expired(200.0).empty());
  EXPECT_EQ(t.next_expiration(), 300.0);
}

TEST(TimerTable, EarliestExpiredTimerWithASignalWinsAndAllOfThePidsTimersGo) {
  TimerTable t;
  t.apply(arm(10, "no-signal", 50.0, 0));
  t.apply(arm(10, "late", 90.0, SIGTERM));
  t.apply(arm(10, "early", 80.0, SIGUSR1));
  t.apply(arm(10, "future", 500.0, SIGKILL));
  t.apply(arm(11, "other", 500.0, SIGKILL));
  auto fired = t.expired(100.0);
  ASSERT_EQ(fired.size(), 1U);
  EXPECT_EQ(fired[0].scope_id, "early");
  EXPECT_EQ(fired[0].signal, SIGUSR1);
  EXPECT_EQ(t.size(), 1U);  // only pid 11's timer is left
  EXPECT_EQ(t.next_expiration(), 500.0);
}

TEST(TimerTable, ExpiredTimersWithoutSignalAreDroppedSilently) {
  TimerTable t;
  t.apply(arm(10, "a", 50.0, 0));
  t.apply(arm(10, "b", 60.0, -3));
  EXPECT_TRUE(t.expired(100.0).empty());
  EXPECT_EQ(t.size(), 0U);
}

TEST(TimerTable, RefusesNewTimersBeyondTheCapButStillRearmsAndReleases) {
  TimerTable t;
  for (std::size_t i = 0; i < k_max_timers; ++i) {
    ASSERT_TRUE(t.apply(arm(10, std::to_string(i), 100.0)));
  }
  EXPECT_FALSE(t.apply(arm(10, "one too many", 50.0)));
  EXPECT_EQ(t.size(), k_max_timers);
  EXPECT_TRUE(t.apply(arm(10, "0", 300.0)));
  EXPECT_TRUE(t.apply(release(10, "1")));
  EXPECT_TRUE(t.apply(arm(10, "now fits", 300.0)));
}

TEST(TimerTable, DeadPidsTimersAreDropped) {
  TimerTable t;
  t.apply(arm(10, "a", 50.0));
  t.apply(arm(10, "b", 60.0));
  t.apply(arm(11, "a", 70.0));
  t.drop_pid(10);
  auto fired = t.expired(100.0);
  ASSERT_EQ(fired.size(), 1U);
  EXPECT_EQ(fired[0].pid, 11);
}
