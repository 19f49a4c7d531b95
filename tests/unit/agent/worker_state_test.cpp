// A worker's state machine: which ends are failures of its own, and when its file timer is
// the failure's cause.

#include "ddprun/agent/worker_state.hpp"

#include <gtest/gtest.h>

#include <csignal>

namespace ddprun::agent {
namespace {

process::ExitInfo exit_code(int code) { return process::ExitInfo{code, 0, false, false}; }
process::ExitInfo killed_by(int sig) { return process::ExitInfo{0, sig, true, false}; }

WorkerRecord worker() { return WorkerRecord(WorkerRanks{1, 5}, 4242); }

TEST(WorkerState, StartsRunningAndWatched) {
  auto w = worker();
  EXPECT_EQ(w.state(), WorkerState::running);
  EXPECT_TRUE(w.alive());
  EXPECT_TRUE(w.watched());
  EXPECT_EQ(w.pid(), 4242);
  EXPECT_EQ(w.ranks().rank, 5);
}

TEST(WorkerState, AStopRequestKeepsItAliveButUnwatched) {
  auto w = worker();
  w.request_stop();
  EXPECT_EQ(w.state(), WorkerState::stopping);
  EXPECT_TRUE(w.alive());
  EXPECT_FALSE(w.watched());
}

TEST(WorkerState, EndingBadlyOnItsOwnIsAFailure) {
  auto w = worker();
  const auto when = std::chrono::system_clock::time_point(std::chrono::seconds(7));
  EXPECT_TRUE(w.ended(exit_code(3), when));
  EXPECT_EQ(w.state(), WorkerState::exited);
  EXPECT_FALSE(w.alive());
  EXPECT_EQ(w.exit().exit_status, 3);
  EXPECT_EQ(w.exit_time(), when);
}

TEST(WorkerState, SucceedingIsNoFailure) {
  auto w = worker();
  EXPECT_FALSE(w.ended(exit_code(0), {}));
  EXPECT_EQ(w.state(), WorkerState::exited);
}

TEST(WorkerState, EndingAfterTheAgentAskedIsNoFailure) {
  auto w = worker();
  w.request_stop();
  EXPECT_FALSE(w.ended(killed_by(SIGTERM), {}));
  EXPECT_EQ(w.state(), WorkerState::stopped);
}

TEST(WorkerState, AStopRequestAfterTheEndChangesNothing) {
  auto w = worker();
  (void)w.ended(exit_code(1), {});
  w.request_stop();
  EXPECT_EQ(w.state(), WorkerState::exited);
}

TEST(WorkerState, AWorkerIsReapedOnce) {
  auto w = worker();
  EXPECT_TRUE(w.ended(exit_code(2), {}));
  EXPECT_FALSE(w.ended(exit_code(9), {}));
  EXPECT_EQ(w.exit().exit_status, 2);
}

TEST(WorkerState, AnExpiredTimerMakesEvenAStoppedEndAFailure) {
  auto w = worker();
  w.expire("watchdog timer \"step\" expired", SIGKILL);
  w.request_stop();
  EXPECT_TRUE(w.ended(killed_by(SIGTERM), {}));
}

TEST(WorkerState, TheTimerIsTheCauseWhenItsSignalEndedTheWorker) {
  auto w = worker();
  w.expire("watchdog timer \"step\" expired", SIGKILL);
  (void)w.ended(killed_by(SIGKILL), {});
  EXPECT_EQ(w.timer_reason(), "watchdog timer \"step\" expired");
}

TEST(WorkerState, TheTimerIsNotTheCauseWhenTheWorkerSurvivedItsSignal) {
  auto w = worker();
  w.expire("watchdog timer \"step\" expired", SIGUSR1);
  (void)w.ended(exit_code(1), {});
  EXPECT_EQ(w.timer_reason(), "");
}

TEST(WorkerState, ACaptureForTheTimerMakesItTheCauseOfAnyFatalSignal) {
  auto w = worker();
  w.expire("watchdog timer \"step\" expired", SIGKILL);
  w.mark_captured();
  (void)w.ended(killed_by(SIGABRT), {});  // faulthandler's dump ended it
  EXPECT_EQ(w.timer_reason(), "watchdog timer \"step\" expired");
}

TEST(WorkerState, ACaptureWithoutATimerMarksNothing) {
  auto w = worker();
  w.mark_captured();
  EXPECT_FALSE(w.timer().has_value());
  (void)w.ended(killed_by(SIGABRT), {});
  EXPECT_EQ(w.timer_reason(), "");
}

}  // namespace
}  // namespace ddprun::agent
